"""Plain command-line values without pydantic, for the parameters that need none (issue 15: start-up time).

typer 0.29 coerces every parameter it processes through a pydantic ``TypeAdapter``, built on first use; even the
``--help`` flag a command was not given gets one. So every verb imports pydantic and builds adapters before it does
anything: about half of ``tomo version`` and a third of ``tomo graph refs`` on a small project (bench/cli_startup.py
measures it against typer 0.28, which had no pydantic). For the kinds most of tomo's parameters are (``str``,
``bool``, ``pathlib.Path`` and an ``int`` without bounds, with no custom parser and no file type) typer's adapter does
no more than ``str(value)``, ``Path(value)`` followed by typer's own path checks, or ``int`` of plain digits.
:func:`install` gives exactly those parameters a coercion that does that, and hands every other case (another type,
a parser, a list, a file, text that is not plain digits, a path that fails its checks) to typer's own coercion, built
as typer builds it, so errors read as they did.

It goes through one private seam, ``typer.core.build_runtime_param``, so it applies only to the typer minor it was
checked against and does nothing on any other; tests/test_cli_startup.py asserts that a graph query imports no
pydantic, so a typer upgrade that bypasses it is noticed there; tests/test_cli_params.py runs one command over the
same arguments with and without it and compares every value and every error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHECKED_TYPER = "0.29."  # the typer minor whose coercion this mirrors
_DIGITS = re.compile(r"-?[0-9]{1,18}")  # an int both Python and pydantic read the same way; anything else is typer's


def install() -> bool:
    """Route str/bool/Path parameters around pydantic; True if it applies to the installed typer."""
    try:
        import typer
        from typer import core
        from typer._coercion import RuntimeParam, TypeDescriptor
        from typer._param_types import coerce_cli_path
    except ImportError:
        return False
    found = getattr(core, "build_runtime_param", None)
    if not typer.__version__.startswith(CHECKED_TYPER) or found is None:
        return False
    if getattr(found, "tomo_plain", False):
        return True
    typer_build: Callable[[Any], Any] = found

    class Plain(RuntimeParam):  # typer's frozen dataclass; only _coerce_value is abstract
        """A str, bool or Path parameter: text becomes the value as typer's own adapter would make it."""

        descriptor: Any
        typer_own: Any

        def __init__(self, descriptor: TypeDescriptor) -> None:
            super().__init__(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
            object.__setattr__(self, "descriptor", descriptor)
            object.__setattr__(self, "typer_own", None)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation is str and isinstance(value, str):
                return str(value)  # typer: _parse_cli_str, then pydantic's str
            if self.annotation is bool and isinstance(value, bool):
                return value
            if self.annotation is int:
                if type(value) is int:
                    return value
                if isinstance(value, str) and _DIGITS.fullmatch(value):
                    return int(value)  # typer: pydantic's int of plain decimal digits
            if self.annotation is Path and isinstance(value, str | Path):
                # typer: pydantic's Path(value) for text, then its own checks (exists, dir_okay, resolve_path, ...);
                # a check that fails is left to typer's own coercion below, whose message quotes the text as given
                path = Path(value) if isinstance(value, str) else value
                try:
                    return coerce_cli_path(path, self.parameter_info, path_type=Path, param=param, ctx=ctx)
                except typer.BadParameter:
                    pass
            if self.typer_own is None:
                object.__setattr__(self, "typer_own", typer_build(self.descriptor))
            return self.typer_own._coerce_value(value, param, ctx)

    def build(descriptor: TypeDescriptor) -> Any:
        info = descriptor.parameter_info
        kind = descriptor.annotation
        plain = descriptor.file_annotation is None and info.parser is None and (
            kind in (str, bool)
            or (kind is Path and getattr(info, "path_type", None) is None)
            or (kind is int and (info.min, info.max, info.clamp) == (None, None, False)))
        return Plain(descriptor) if plain else typer_build(descriptor)

    build.tomo_plain = True  # type: ignore[attr-defined]
    core.build_runtime_param = build
    return True
