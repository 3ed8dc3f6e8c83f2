"""Go bindings: package scope across the package's files, `pkg.H` through go.mod import paths; the rest ambiguous.

Markers as in test_bind_js.py (``// # refs: ...`` per line, left to right).
"""

from __future__ import annotations

from tomo.prism import Graph

from .conftest import write_project

MODULE = {
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "util/util.go": """
        package util

        func H() int { return 1 }  // # refs: def

        func use() int { return H() }  // # refs: confirmed

        func shadow(H int) int { return H }  // # refs: ambiguous(local), ambiguous(local)

        func local() int {
            if H := 2; H > 1 {  // # refs: ambiguous(local), ambiguous(local)
                return H  // # refs: ambiguous(local)
            }
            for _, H := range []int{1} {  // # refs: ambiguous(local)
                _ = H  // # refs: ambiguous(local)
            }
            return H()  // # refs: confirmed
        }

        type T struct{ H int }  // # refs: ambiguous(property)

        func (t T) H() int { return t.H }  // # refs: ambiguous(another definition), ambiguous(property)

        func generic[H any](x H) H { return x }  // # refs: ambiguous(local), ambiguous(local), ambiguous(local)

        var _ = map[string]int{"a": H()}  // # refs: confirmed
        var _ = T{H: 1}  // # refs: ambiguous(field name or a map key)
    """,
    "util/more.go": """
        package util

        func more() int { return H() }  // # refs: confirmed
    """,
    "util/util_test.go": """
        package util_test

        import "example.com/shop/util"

        func TestH() { util.H() }  // # refs: confirmed
    """,
    "main.go": """
        package main

        import (
            u "example.com/shop/util"
            "example.com/shop/other"
        )

        func main() { u.H(); other.H() }  // # refs: confirmed, ambiguous(is the package example.com/shop/other)
        func H() {}  // # refs: ambiguous(another definition)
        func g() { H() }  // # refs: ambiguous(main.go's own top-level declaration)
    """,
    "other/other.go": """
        package other

        func H() {}  // # refs: ambiguous(another definition)
    """,
}


def test_package_scope_imports_and_shadowing(golden) -> None:  # type: ignore[no-untyped-def]
    golden(MODULE, "util.util.H")


def test_a_second_package_level_declaration_makes_other_files_ambiguous(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, {**MODULE, "util/h_windows.go": "package util\n\nfunc H() int { return 2 }\n"})
    with Graph.open(tmp_path) as g:
        refs = {(r.path, r.line): r for r in g.references("util.util.H")}
    assert refs[("util/util.go", 5)].confidence == "confirmed"  # the same file: its own declaration
    assert refs[("util/more.go", 3)].confidence == "ambiguous"
    assert "util/h_windows.go also declares `H`" in refs[("util/more.go", 3)].reason
    assert refs[("util/util_test.go", 5)].confidence == "ambiguous"


def test_without_go_mod_an_import_is_not_proven(tmp_path) -> None:  # type: ignore[no-untyped-def]
    files = {k: v for k, v in MODULE.items() if k != "go.mod"}
    write_project(tmp_path, files)
    with Graph.open(tmp_path) as g:
        refs = {(r.path, r.line): r for r in g.references("util.util.H")}
    assert refs[("util/more.go", 3)].confidence == "confirmed"  # package scope needs no go.mod
    assert refs[("main.go", 8)].confidence == "ambiguous" and "no go.mod" in refs[("main.go", 8)].reason


def test_an_unaliased_import_must_name_the_package(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "go.mod": "module example.com/m\n",
        "lib/v2/a.go": "package lib\n\nfunc H() {}  // # refs: def\n",
        "b.go": """
            package main

            import "example.com/m/lib/v2"

            func main() { lib.H() }  // # refs: confirmed
        """,
        "c/c.go": """
            package c

            import "example.com/m/lib/v2"

            func f() { v2.H() }  // # refs: ambiguous(property)
        """,
    }, "lib.v2.a.H")
