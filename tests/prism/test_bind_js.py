"""JavaScript and TypeScript bindings: scopes and relative imports are proven; everything else stays ambiguous.

The fixtures mark each line with ``// # refs: ...`` (see conftest.py): ``def``, ``confirmed`` or ``ambiguous(words of
the reason)`` for each occurrence of the symbol's name on the line, left to right; unmarked lines have none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tomo.prism import Graph

SAME_FILE = {
    "web/a.js": """
        export function h(x) { return x; }  // # refs: def
        h(1);  // # refs: confirmed
        const k = () => h(2);  // # refs: confirmed
        function param(h) { return h; }  // # refs: ambiguous(local declared at line 4), ambiguous(line 4)
        function local() { const h = 3; return h; }  // # refs: ambiguous(local), ambiguous(line 5)
        function hoisted() { if (k) { var h = 1; } return h; }  // # refs: ambiguous(local), ambiguous(local)
        function nested() { function h() {} return h(); }  // # refs: ambiguous(local), ambiguous(local)
        function unshadowed() { { let h = 1; } return h(); }  // # refs: ambiguous(local), confirmed
        function sees() { return h(3); }  // # refs: confirmed
        try { k(); } catch (h) { h.x; }  // # refs: ambiguous(local), ambiguous(local)
        for (const h of [1]) { h; }  // # refs: ambiguous(local), ambiguous(local)
        function destructure({ h }, [g = h]) { return g; }  // # refs: ambiguous(local), ambiguous(local)
        function renamed({ v: h }) { return h; }  // # refs: ambiguous(local), ambiguous(local)
        const o = { h };  // # refs: ambiguous(shorthand)
        o.h(); o["h"];  // # refs: ambiguous(property)
        class C { h() { return h(4); } }  // # refs: ambiguous(another definition), confirmed
        const f = function h() { return h; };  // # refs: ambiguous(local), ambiguous(local)
        with (o) { h(); }  // # refs: ambiguous(with)
        export { h as alias };  // # refs: confirmed
    """,
}


def test_same_file_uses_that_no_inner_scope_shadows_are_confirmed(golden) -> None:  # type: ignore[no-untyped-def]
    golden(SAME_FILE, "web.a.h")


IMPORTS = {
    "web/a.js": """
        export function h() {}  // # refs: def
        export default function main() { return h(); }  // # refs: confirmed
    """,
    "web/b.js": """
        import { h } from './a';  // # refs: confirmed
        import { h as k } from './a.js';  // # refs: confirmed
        h(); k();  // # refs: confirmed
        function g(h) { return h; }  // # refs: ambiguous(local), ambiguous(local)
        export { h } from './a';  // # refs: confirmed
    """,
    "web/c.ts": """
        import * as a from './a';
        import { h } from 'a-package';  // # refs: ambiguous(not a relative path)
        a.h();  // # refs: confirmed
        h();  // # refs: ambiguous(not a relative path)
    """,
    "web/sub/d.ts": """
        import { h } from '..';  // # refs: ambiguous(not a module in the index)
        import { h as other } from '../b';  // # refs: ambiguous(imported from web/b.js, not from web/a.js)
    """,
    "web/e.js": """
        function h() {}  // # refs: ambiguous(another definition)
        h();  // # refs: ambiguous(web/e.js's own top-level declaration)
    """,
    "web/f.ts": """
        import { h } from './e';  // # refs: ambiguous(imported from web/e.js, not from web/a.js)
        h();  // # refs: ambiguous(imported from web/e.js)
    """,
}


def test_imports_resolve_relative_paths_extensions_and_aliases(golden) -> None:  # type: ignore[no-untyped-def]
    golden(IMPORTS, "web.a.h")


def test_a_same_name_function_elsewhere_is_not_confirmed(tmp_path: Path) -> None:
    from .conftest import write_project

    write_project(tmp_path, IMPORTS)
    with Graph.open(tmp_path) as g:
        refs = g.references("web.e.h")
    got = {(r.path, r.line): r.confidence for r in refs}
    assert got[("web/e.js", 1)] == got[("web/e.js", 2)] == "confirmed"
    assert got[("web/f.ts", 1)] == got[("web/f.ts", 2)] == "confirmed"
    assert got[("web/a.js", 1)] == "ambiguous"  # its own definition, never this symbol


def test_index_files_default_exports_and_ts_types(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "src/shapes/index.ts": """
            export default interface Shape { area(): number; }  // # refs: def
            export function make(): Shape { return null as any; }  // # refs: confirmed
            function generic<Shape>(x: Shape): Shape { return x; }  // # refs: ambiguous, ambiguous, ambiguous
        """,
        "src/use.ts": """
            import Shape from './shapes';  // # refs: confirmed
            import type { Shape as S } from './shapes/index';  // # refs: confirmed
            export const s: Shape | null = null;  // # refs: confirmed
        """,
        "src/other.ts": """
            import Shape from './shapes.js';  // # refs: ambiguous(not a module in the index)
        """,
    }, "shapes.index.Shape")


def test_an_export_alias_of_the_same_name_blocks_import_proofs(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "a.js": """
            function h() {}  // # refs: def
            function g() {}
            export { g as h };  // # refs: ambiguous(the exported alias)
        """,
        "b.js": "import { h } from './a';  // # refs: ambiguous(not the one top-level binding)\n",
    }, "a.h")


def test_two_candidate_files_for_one_import_stay_ambiguous(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "a.ts": "export function h() {}  // # refs: def\n",
        "a.js": "export function h() {}  // # refs: ambiguous\n",
        "b.ts": "import { h } from './a';  // # refs: ambiguous(could be any of a.js, a.ts)\n",
    }, "a.ts:1:16")


def test_a_name_declared_twice_in_one_scope_is_not_proven(golden) -> None:  # type: ignore[no-untyped-def]
    golden({"m.js": """
        var h = 1;  // # refs: def
        var h = 2;  // # refs: ambiguous
        h;  // # refs: ambiguous(declared more than once)
    """}, "m.h")


def test_jsx_intrinsic_tags_and_type_level_bindings(golden) -> None:  # type: ignore[no-untyped-def]
    golden({"ui.tsx": """
        export function div() { return 1; }  // # refs: def
        export const a = <div>{div()}</div>;  // # refs: ambiguous(intrinsic), confirmed, ambiguous(intrinsic)
        type M<T> = { [div in keyof T]: div };  // # refs: ambiguous(local), ambiguous(local)
        type I<T> = T extends Array<infer div> ? div : never;  // # refs: ambiguous(local), ambiguous(local)
    """}, "ui.div")


def test_a_use_location_names_the_definition_it_is_bound_to(tmp_path: Path) -> None:
    from tomo.errors import PrismError

    from .conftest import write_project

    write_project(tmp_path, IMPORTS)
    with Graph.open(tmp_path) as g:
        assert g.symbol("web/b.js:3:0").qualname == "web.a.h"  # `h();` through `import { h } from './a'`
        assert g.symbol("web/c.ts:3:2").qualname == "web.a.h"  # `a.h()` through `import * as a`
        with pytest.raises(PrismError, match="not provably bound to one indexed definition"):
            g.symbol("web/c.ts:4:0")  # imported from a package
