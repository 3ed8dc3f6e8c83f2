"""The tool registry: typed Python functions in, readable results out, and the allow-list enforced in code.

A tool is an ordinary function (sync or async). Its JSON schema comes from its signature and docstring through
pydantic, so what the model is told and what is validated can never drift apart. Parameters that say *who is asking*
(typed :class:`Caller`, or annotated with :class:`FromCaller`) are filled from the verified caller and never appear in
the schema: a model cannot choose its tenant, and a tenant key it sends anyway is dropped.

:meth:`Registry.call` never raises for a model's mistake. An unknown tool, a tool outside the agent's allow-list, a
malformed or invalid argument object and a handler that raises all come back as a :class:`ToolResult` whose text the
model can act on. Results are capped per tool and a cut result says so in words, so a capped list never reads like a
complete one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import re
import time
import typing
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from tomo.errors import TomoError, ToolDefinitionError
from tomo.models.messages import ToolCall, ToolSpec

DEFAULT_CAP = 4_000
"""Characters a tool result may take before it is cut (a few thousand: enough to act on, small enough to repeat)."""

Status = Literal["ok", "refused", "error"]

# Keys a model may send to try to act as someone else. They are dropped (never an error, never obeyed) unless the tool
# genuinely declares a parameter of that name that is not injected.
CALLER_KEYS = frozenset({"caller", "tenant", "tenant_id", "user", "user_id", "workspace", "workspace_id"})

_TENANT_NAMES = frozenset({"tenant", "tenant_id", "caller"})  # never a model-chosen parameter
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


# ---- who is asking -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """The verified caller: set by the CLI or the console's session, never by the model."""

    user: str
    tenant: int | str
    workspace: Path | None = None


@dataclass(frozen=True, slots=True)
class FromCaller:
    """Marks a parameter as filled from one attribute of the caller: ``Annotated[int, FromCaller("tenant")]``."""

    attr: Literal["user", "tenant", "workspace"]


TenantId = Annotated[int | str, FromCaller("tenant")]
UserId = Annotated[str, FromCaller("user")]
WorkspaceDir = Annotated[Path | None, FromCaller("workspace")]


class ToolUser(Protocol):
    """What the registry needs from an agent: its name and its allow-list (an ``Agent`` satisfies this)."""

    @property
    def name(self) -> str: ...

    @property
    def tools(self) -> Sequence[str]: ...

    @property
    def allowed(self) -> frozenset[str]: ...


# ---- results -------------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class ToolResult:
    """What a call came to. ``text`` is what the model reads; ``value`` is the handler's full return value (for the
    harness and the user, never for the model), ``None`` unless the handler ran."""

    tool: str
    status: Status
    text: str
    capped: bool = False
    shown: int = 0
    total: int = 0
    unit: str = ""
    dropped: tuple[str, ...] = ()
    value: Any = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(slots=True)
class Tool:
    """A registered function with its schema, its validator and how its results are capped."""

    name: str
    fn: Callable[..., Any]
    spec: ToolSpec
    validator: type[BaseModel]
    injected: dict[str, str | None]  # parameter -> caller attribute (None: the whole Caller)
    dropped_keys: frozenset[str]
    is_async: bool
    cap: int = DEFAULT_CAP
    unit: str = "items"
    params: tuple[str, ...] = field(default_factory=tuple)
    thread: bool = False


# ---- the registry --------------------------------------------------------------------------------------------------


class Registry:
    """Every tool tomo can offer a model. Agents see only the tools on their allow-list."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: dict[tuple[str, ...], list[ToolSpec]] = {}

    def register(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        cap: int | None = None,
        *,
        unit: str = "items",
        description: str | None = None,
        thread: bool = False,
    ) -> Tool:
        """Adds ``fn`` as a tool. A function that cannot become a schema raises :class:`ToolDefinitionError` now,
        at registration, rather than on the model's first call.

        ``cap`` is in characters (default :data:`DEFAULT_CAP`); ``unit`` names what a list result holds, for the
        cut notice ("showing 50 of 1,234 references"); ``thread=True`` runs a slow sync function in a worker thread
        so it does not hold up the event loop (a web console serving other sessions, say).
        """
        tool = _build_tool(fn, name or fn.__name__, cap if cap is not None else DEFAULT_CAP, unit, description)
        tool.thread = thread and not tool.is_async
        if tool.name in self._tools:
            raise ToolDefinitionError(f"a tool named {tool.name!r} is already registered",
                                      hint="pass name= to register it under another name")
        self._tools[tool.name] = tool
        self._specs.clear()
        return tool

    def tool(self, name: str | None = None, cap: int | None = None, *, unit: str = "items", thread: bool = False,
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of :meth:`register`; returns the function unchanged so it stays callable and testable."""

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.register(fn, name, cap, unit=unit, thread=thread)
            return fn

        return decorate

    @property
    def names(self) -> list[str]:
        return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise ToolDefinitionError(f"no tool named {name!r}", hint=f"registered: {', '.join(self.names)}") from None

    def specs(self, agent: ToolUser) -> list[ToolSpec]:
        """The specs an agent may see, in allow-list order. Cached: the loop asks every step."""
        names = tuple(agent.tools)
        cached = self._specs.get(names)
        if cached is None:
            cached = self._specs[names] = [self._tools[n].spec for n in names if n in self._tools]
        return cached

    async def call(self, agent: ToolUser, call: ToolCall, caller: Caller) -> ToolResult:
        """Runs one call for ``caller`` if ``agent`` may make it. Never raises for anything the model did."""
        name = call.name
        if name not in agent.allowed:
            # The allow-list is checked before the registry is consulted for a handler: a refused tool never runs.
            available = ", ".join(agent.tools) or "none"
            if name in self._tools:
                return ToolResult(name, "refused",
                                  f"tool {name!r} is not available to agent {agent.name!r}; available: {available}")
            return ToolResult(name, "error", f"there is no tool named {name!r}; available: {available}")
        tool = self._tools.get(name)
        if tool is None:  # allowed but never registered: only possible for an Agent built by hand
            installed = ", ".join(s.name for s in self.specs(agent)) or "none"
            return ToolResult(name, "error", f"tool {name!r} is not installed in this tomo; available: {installed}")
        if call.malformed is not None:
            sent = (call.raw_args or "")[:300]
            return ToolResult(name, "error", f"your call to {name!r} was not run: {call.malformed}. You sent: {sent}\n"
                                             "Send the arguments again as one JSON object matching the tool's schema.")
        return await _invoke(tool, call.args, caller)


async def _invoke(tool: Tool, raw: dict[str, Any], caller: Caller) -> ToolResult:
    args = raw if isinstance(raw, dict) else {}
    dropped = tuple(k for k in args if k in tool.dropped_keys)
    if dropped:
        args = {k: v for k, v in args.items() if k not in tool.dropped_keys}
    try:
        validated = tool.validator.model_validate(args)
    except ValidationError as exc:
        return ToolResult(tool.name, "error", _explain(tool, exc), dropped=dropped)
    kwargs = {p: getattr(validated, p) for p in tool.params}
    for param, attr in tool.injected.items():
        kwargs[param] = caller if attr is None else getattr(caller, attr)
    started = time.perf_counter()
    try:
        value = await asyncio.to_thread(tool.fn, **kwargs) if tool.thread else tool.fn(**kwargs)
        if tool.is_async or inspect.isawaitable(value):
            value = await typing.cast(Awaitable[Any], value)
        elif isinstance(value, AsyncIterator):  # a generator tool: its items are the result (and the value kept)
            value = [item async for item in value]
        elif isinstance(value, Iterator):
            value = list(value)
    except TomoError as exc:
        text = f"tool {tool.name!r} failed: {exc.message}" + (f" (hint: {exc.hint})" if exc.hint else "")
        return ToolResult(tool.name, "error", text, dropped=dropped, seconds=time.perf_counter() - started)
    except Exception as exc:
        text = f"tool {tool.name!r} failed: {type(exc).__name__}: {exc}"
        return ToolResult(tool.name, "error", text, dropped=dropped, seconds=time.perf_counter() - started)
    except SystemExit as exc:  # a wrapped command-line main (argparse on a bad option): the tool failed, not tomo
        text = f"tool {tool.name!r} failed: it called sys.exit({exc.code!r})"
        return ToolResult(tool.name, "error", text, dropped=dropped, seconds=time.perf_counter() - started)
    seconds = time.perf_counter() - started
    try:
        result = render_result(tool.name, value, tool.cap, tool.unit)
    except Exception as exc:  # a value that cannot become text is the tool's bug; the model still gets an answer
        text = f"tool {tool.name!r} ran but its result could not be shown: {type(exc).__name__}: {exc}"
        return ToolResult(tool.name, "error", text, dropped=dropped, value=value, seconds=seconds)
    result.dropped, result.value, result.seconds = dropped, value, seconds
    if dropped:
        result.text += f"\n(note: ignored {', '.join(repr(k) for k in dropped)}: tools always run as the verified " \
                       "caller, for the caller's own tenant)"
    return result


def _explain(tool: Tool, exc: ValidationError) -> str:
    """Turns pydantic's errors into sentences naming each field and what it expected."""
    props = tool.spec.parameters.get("properties", {})
    problems = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        top = str(err["loc"][0]) if err["loc"] else ""
        if err["type"] == "missing":  # the expected type is only known here for a top-level parameter
            expects = _expects(props.get(top)) if len(err["loc"]) == 1 else ""
            problems.append(f"{loc}: required{expects}, but missing")
        elif err["type"] == "extra_forbidden":
            problems.append(f"{loc}: not a parameter of this tool")
        else:
            expected = _type_name(props.get(top)) if len(err["loc"]) == 1 else ""
            problems.append(f"{loc}: expected {expected or 'a different value'}, got {_short(err.get('input'))} "
                            f"({err['msg'][0].lower()}{err['msg'][1:]})")
    takes = ", ".join(
        f"{p} ({_type_name(props.get(p))}{', required' if p in tool.spec.parameters.get('required', []) else ''})"
        for p in props) or "no arguments"
    return f"invalid arguments for {tool.name!r}: " + "; ".join(problems) + f". {tool.name} takes: {takes}"


def _expects(prop: dict[str, Any] | None) -> str:
    name = _type_name(prop)
    return f" (expected {name})" if name else ""


def _type_name(prop: dict[str, Any] | None) -> str:
    if not prop:
        return ""
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    if "type" in prop:
        kind = prop["type"]
        if kind == "array" and isinstance(prop.get("items"), dict) and "type" in prop["items"]:
            return f"array of {prop['items']['type']}"
        return str(kind)
    if "anyOf" in prop:
        return " or ".join(_type_name(p) or "object" for p in prop["anyOf"])
    if "$ref" in prop:
        return "object"
    return ""


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- capping -------------------------------------------------------------------------------------------------------


def render_result(tool: str, value: Any, cap: int = DEFAULT_CAP, unit: str = "items") -> ToolResult:
    """Turns a handler's return value into text the model can read, cut to ``cap`` characters and saying so.

    Lists are counted in items (``unit``: "references", "jobs"...), strings in lines and characters. An empty result
    says it is empty, so a model cannot mistake silence for a failure or invent content. A generator (or any other
    iterator) is a list the tool yields item by item; bytes are text the tool did not decode.
    """
    if isinstance(value, Iterator):
        value = list(value)
    elif isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", "replace")
    if value is None or (isinstance(value, str | list | tuple | dict | set | frozenset) and not value) or (
        isinstance(value, str) and not value.strip()
    ):
        kind = unit if isinstance(value, list | tuple | set | frozenset) else "output"
        return ToolResult(tool, "ok", f"empty result: {tool} returned no {kind}.")
    if isinstance(value, list | tuple | set | frozenset):
        return _cap_items(tool, [_item_text(v) for v in value], cap, unit)
    text = value if isinstance(value, str) else _item_text(value)
    return _cap_text(tool, text, cap)


def _item_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _cap_items(tool: str, items: list[str], cap: int, unit: str) -> ToolResult:
    total = len(items)
    used, shown = 0, 0
    for item in items:
        cost = len(item) + 1
        if used + cost > cap and shown:
            break
        used += cost
        shown += 1
    if shown == total:
        return ToolResult(tool, "ok", "\n".join(items), shown=shown, total=total, unit=unit)
    body = "\n".join(items[:shown])
    if len(body) > cap:  # a single item bigger than the cap
        body = body[:cap] + " …[item cut]"
    note = f"showing {shown:,} of {total:,} {unit}; ask for a narrower query to see the rest."
    return ToolResult(tool, "ok", f"[{note}]\n{body}\n[{note}]", capped=True, shown=shown, total=total, unit=unit)


def _cap_text(tool: str, text: str, cap: int) -> ToolResult:
    total = len(text)
    if total <= cap:
        return ToolResult(tool, "ok", text, shown=total, total=total, unit="characters")
    cut = text.rfind("\n", 0, cap)
    if cut < cap // 2:
        cut = cap
    body = text[:cut]
    lines_total = text.count("\n") + 1
    if lines_total > 1:
        lines_shown = body.count("\n") + 1
        note = (f"showing the first {lines_shown:,} of {lines_total:,} lines ({len(body):,} of {total:,} characters); "
                "ask for a narrower range to see the rest.")
        return ToolResult(tool, "ok", f"[{note}]\n{body}\n[{note}]", capped=True, shown=lines_shown,
                          total=lines_total, unit="lines")
    note = f"showing the first {len(body):,} of {total:,} characters; ask for a narrower query to see the rest."
    return ToolResult(tool, "ok", f"[{note}]\n{body}\n[{note}]", capped=True, shown=len(body), total=total,
                      unit="characters")


# ---- building a tool from a function ------------------------------------------------------------------------------


def _build_tool(fn: Callable[..., Any], name: str, cap: int, unit: str, description: str | None) -> Tool:
    if not _NAME.match(name):
        raise ToolDefinitionError(f"tool name {name!r} is not allowed",
                                  hint="use 1-64 letters, digits, '_' or '-' (what every provider accepts)")
    if cap < 100:
        raise ToolDefinitionError(f"cap {cap} for tool {name!r} is too small", hint="give at least 100 characters")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(f"cannot read the type hints of tool {name!r}: {exc}",
                                  hint="make every annotation importable at module level") from exc
    summary, arg_docs = parse_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    injected: dict[str, str | None] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolDefinitionError(f"tool {name!r} has parameter {param.name!r} of kind {param.kind.description}",
                                      hint="tools take named parameters only (no *args, **kwargs or positional-only)")
        if param.name not in hints:
            raise ToolDefinitionError(f"parameter {param.name!r} of tool {name!r} has no type annotation",
                                      hint="annotate it: the annotation becomes the schema the model sees")
        annotation = hints[param.name]
        source = _injection(annotation)
        if source is not False:
            injected[param.name] = source
            continue
        if param.name in _TENANT_NAMES:
            raise ToolDefinitionError(
                f"parameter {param.name!r} of tool {name!r} would let the model choose the tenant",
                hint="annotate it as tomo.tools.TenantId (or type it Caller) so it is filled from the verified caller")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=arg_docs.get(param.name)))
    try:
        with warnings.catch_warnings():  # a parameter may be called `json`, `copy` or `model_name`: it is not ours
            warnings.filterwarnings("ignore", message="Field name .* shadows an attribute", category=UserWarning)
            validator = create_model(
                f"{name}_args",
                __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False, protected_namespaces=()),
                **fields,
            )
        schema = validator.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(f"tool {name!r} cannot be described as a JSON schema: {exc}",
                                  hint="use JSON-friendly types: str, int, float, bool, list, dict, Literal, "
                                       "pydantic models, dataclasses") from exc
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("properties", {})
    spec = ToolSpec(name, description or summary or name.replace("_", " "), schema)
    dropped_keys = frozenset((CALLER_KEYS | set(injected)) - set(fields))
    return Tool(name, fn, spec, validator, injected, dropped_keys, inspect.iscoroutinefunction(fn), cap, unit,
                tuple(fields))


def _injection(annotation: Any) -> str | Literal[False] | None:
    """``None`` for the whole Caller, an attribute name for ``FromCaller``, ``False`` for an ordinary parameter."""
    if annotation is Caller:
        return None
    if typing.get_origin(annotation) is Annotated:
        for meta in typing.get_args(annotation)[1:]:
            if isinstance(meta, FromCaller):
                return meta.attr
        if typing.get_args(annotation)[0] is Caller:
            return None
    return False


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^(\s*)\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+):\s*(.*)$")
_ARG_SECTIONS = ("Args", "Arguments", "Parameters", "Params")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Splits a Google- or reST-style docstring into the tool's description and one line per argument."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for raw in doc.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header and not raw.startswith((" ", "\t")):
            section, current, arg_indent = header.group(1), None, None
            continue
        rest = _REST_PARAM.match(stripped)
        if rest:
            section, current = "rest", rest.group(1)
            args[current] = rest.group(2).strip()
            continue
        if section is None:
            summary.append(line)
            continue
        if section in _ARG_SECTIONS:
            match = _ARG_LINE.match(line)
            if match and (arg_indent is None or len(match.group(1)) <= arg_indent):
                arg_indent, current = len(match.group(1)), match.group(2)
                args[current] = match.group(3).strip()
                continue
        if section in (*_ARG_SECTIONS, "rest") and current and stripped and not stripped.startswith(":"):
            args[current] = (args[current] + " " + stripped).strip()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(summary).strip()), args
