"""The graph operations as typed functions: one definition, registered on tomo's ``Registry`` (assist) and on the MCP
server (``tomo mcp``), so the schema a model sees in assist and the one an MCP client sees cannot drift apart.

Each function only names its arguments and forwards them to ``call(operation, args)``; the caller decides what the
answer looks like (a receipt for assist's model, receipt plus payload for an MCP client).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], str | Awaitable[str]]


async def _run(call: Call, op: str, args: dict[str, Any]) -> str:
    value = call(op, args)
    if isinstance(value, str):
        return value
    return await value


def graph_tools(call: Call, *, for_mcp: bool = False) -> list[Callable[..., Awaitable[str]]]:
    """The operations as async functions. ``for_mcp`` adds what a direct user of the graph may do and assist's model
    may not: choosing to apply ambiguous edits, and undoing an apply."""

    async def find_symbol(query: str, limit: int = 20) -> str:
        """Find definitions by qualified name (pkg.mod.Class.method), dotted suffix (Class.method) or part of a name.

        Args:
            query: the name or part of it, e.g. "Class.method" or "method"
            limit: at most this many matches
        """
        return await _run(call, "find_symbol", {"query": query, "limit": limit})

    async def definition(symbol: str) -> str:
        """Where a symbol is defined and what kind it is.

        Args:
            symbol: qualified name (pkg.mod.Class.method), a unique suffix, or path:line:col of a use
        """
        return await _run(call, "definition", {"symbol": symbol})

    async def references(symbol: str) -> str:
        """Every reference to a symbol across the repository, each confirmed (binding proven) or ambiguous (with why).

        Args:
            symbol: qualified name, a unique suffix, or path:line:col
        """
        return await _run(call, "references", {"symbol": symbol})

    async def callers(symbol: str) -> str:
        """The call sites of a function or method and the functions that contain them.

        Args:
            symbol: qualified name, a unique suffix, or path:line:col
        """
        return await _run(call, "callers", {"symbol": symbol})

    async def callees(symbol: str) -> str:
        """The calls a function or method makes, bound to their definitions where the graph can prove it.

        Args:
            symbol: qualified name, a unique suffix, or path:line:col
        """
        return await _run(call, "callees", {"symbol": symbol})

    async def impact(symbol: str, depth: int = 3) -> str:
        """What may break if a symbol changes: its transitive callers and importers, tests marked.

        Args:
            symbol: qualified name, a unique suffix, or path:line:col
            depth: how many levels of callers to follow (1-8)
        """
        return await _run(call, "impact", {"symbol": symbol, "depth": depth})

    async def rename_plan(symbol: str, new_name: str) -> str:
        """Plan a rename: every edit it needs across the repository (confirmed or ambiguous) and any name collision.
        Returns a plan handle; nothing is written until the plan is applied.

        Args:
            symbol: qualified name of what to rename, e.g. "package.module.Class.method"
            new_name: the new identifier, e.g. "new_method"
        """
        return await _run(call, "rename_plan", {"symbol": symbol, "new_name": new_name})

    async def apply_plan(handle: str) -> str:
        """Apply a rename plan by its handle (e.g. "p1-abcd"): all its confirmed edits, in every file, or nothing.
        A plan whose files changed since it was made is refused; make a new plan then.

        Args:
            handle: the plan handle from a rename_plan receipt
        """
        return await _run(call, "apply_plan", {"handle": handle})

    async def apply_plan_mcp(handle: str, include_ambiguous: bool = False) -> str:
        """Apply a rename plan by its handle (e.g. "p1-abcd"): all its confirmed edits, in every file, or nothing.
        A plan whose files changed since it was made is refused; make a new plan then.

        Args:
            handle: the plan handle from a rename_plan result
            include_ambiguous: also apply the edits the graph could not prove (check them in the plan first)
        """
        return await _run(call, "apply_plan", {"handle": handle, "include_ambiguous": include_ambiguous})

    async def undo_apply(handle: str, force: bool = False) -> str:
        """Undo an apply by its handle (e.g. "a1-abcd"): restore every file it wrote to its bytes before the apply.

        Args:
            handle: the handle from an apply_plan result
            force: restore even files that were edited again after the apply
        """
        return await _run(call, "undo_apply", {"handle": handle, "force": force})

    apply_plan_mcp.__name__ = apply_plan_mcp.__qualname__ = "apply_plan"
    common: list[Callable[..., Awaitable[str]]] = [find_symbol, definition, references, callers, callees, impact,
                                                   rename_plan]
    return [*common, apply_plan_mcp, undo_apply] if for_mcp else [*common, apply_plan]
