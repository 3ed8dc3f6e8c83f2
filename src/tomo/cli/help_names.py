"""Help that names what goes where: ``--root DIR``, ``TASK``, not typer 0.29's ``--root <path>`` and ``{task}``.

typer 0.29 labels every value in help by its Python type (``<str>``, ``<int range>``, ``<list[str]>``, a flag's
``<bool>`` in the panels) and writes a required argument as ``{task}`` in the usage line. A new user reads neither
as a name: ``<str>`` says nothing about what to type, and braces read as a template to fill in. :func:`install`
makes help say what click always said: an argument by its name in capitals (``TASK``, ``COMMAND...``, ``[PATH]``
when optional), an option's value by its ``metavar`` (``--root DIR``, ``--model SPEC``), else by the option's name
in capitals; a flag by itself. Each verb picks its metavars; this only changes the fallback and the layout.

It patches display methods of ``typer.core.TyperArgument`` and ``TyperOption`` for the typer minor it was checked
against (as :mod:`tomo.cli.plain_params` does) and does nothing on any other; tests/test_cli_help.py walks every
command's help and fails on a type label or a brace, so a typer upgrade that changes the seam is noticed there.
Importing this module costs nothing beyond typer.core, which the command line imports anyway.
"""

from __future__ import annotations

from typing import Any

CHECKED_TYPER = "0.29."

MODEL_SPECS = "ollama:NAME, claude:NAME, openai:NAME, openai-compat:URL#NAME, scripted:PATH"
"""The spec forms the gateway takes (``tomo.models.gateway.model_from_spec``); every ``--model`` help names them."""


def model_help(what: str = "Model spec", default: str = "detected") -> str:
    """The help of a ``--model`` option: the spec forms, and where the model comes from without one."""
    return f"{what}: {MODEL_SPECS}; a bare NAME is an Ollama model; default: {default}."


def _name(param: Any) -> str:
    return str(param.metavar or (param.name or "value").upper())


def install() -> bool:
    """Make help show names instead of type labels; True if it applies to the installed typer."""
    import typer
    from typer.core import TyperArgument, TyperOption

    if not typer.__version__.startswith(CHECKED_TYPER):
        return False
    if getattr(TyperArgument, "tomo_names", False):
        return True

    def argument_name(self: Any) -> str:
        return _name(self)

    def argument_usage(self: Any) -> str:
        name = _name(self)
        if not self.required:
            name = f"[{name}]"
        return name + "..." if self.nargs != 1 else name

    def argument_type(self: Any, ctx: Any) -> str | None:
        return None  # the argument's name says it; a type label after it adds nothing

    def option_value(self: Any, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        return _name(self) + ("..." if self.nargs != 1 else "")

    TyperArgument.display_name_raw = property(argument_name)  # type: ignore[assignment, method-assign]
    TyperArgument._usage_display_name = argument_usage  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign]
    TyperOption.display_type_rich = option_value  # type: ignore[method-assign]
    TyperArgument.tomo_names = True  # type: ignore[attr-defined]
    return True
