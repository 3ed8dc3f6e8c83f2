"""Rust bindings: module scopes, inline modules as walls, `use crate::`/`super::`/`self::` paths; the rest ambiguous.

Markers as in test_bind_js.py (``// # refs: ...`` per line, left to right).
"""

from __future__ import annotations

from tomo.prism import Graph

from .conftest import write_project

CRATE = {
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
    "src/lib.rs": """
        pub mod a;
        pub mod b;
        use crate::a::h;  // # refs: confirmed
        pub fn top() -> u8 { h() }  // # refs: confirmed
    """,
    "src/a.rs": """
        pub fn h() -> u8 { 1 }  // # refs: def

        pub fn uses(x: u8) -> u8 { h() + x }  // # refs: confirmed

        fn shadow(h: u8) -> u8 { h }  // # refs: ambiguous(local), ambiguous(local)

        fn locals() -> u8 {
            let h = 2;  // # refs: ambiguous(local)
            let c = |h: u8| h;  // # refs: ambiguous(local), ambiguous(local)
            match Some(3) { Some(h) => h, None => c(h) }  // # refs: ambiguous(local), ambiguous, ambiguous
        }

        fn later() -> u8 { for h in 0..1 { let _ = h; } h() }  // # refs: ambiguous(local), ambiguous(local), confirmed

        fn in_macro(s: S) { println!("{}", h()); println!("{}", s.h); }  // # refs: confirmed, ambiguous(macro)

        pub struct S { pub h: u8 }  // # refs: ambiguous(property)

        impl S { pub fn h(&self) -> u8 { self.h } }  // # refs: ambiguous(another definition), ambiguous(property)

        mod inner {
            fn f() -> u8 { h() }  // # refs: ambiguous(no declaration)
        }

        #[cfg(test)]
        mod tests {
            use super::*;
            #[test]
            fn t() { assert_eq!(h(), 1); }  // # refs: confirmed
        }
    """,
    "src/b/mod.rs": """
        pub mod c;
        use super::a::h as k;  // # refs: confirmed
        pub fn g() -> u8 { k() + crate::a::h() + self::c::h() }  // # refs: confirmed, ambiguous(crate::b::c, not)
    """,
    "src/b/c.rs": """
        use super::super::a;
        pub fn h() -> u8 { a::h() }  // # refs: ambiguous(another definition), ambiguous(path)
        fn i() -> u8 { other::a::h() }  // # refs: ambiguous(path)
    """,
}


def test_module_scopes_use_paths_and_shadowing(golden) -> None:  # type: ignore[no-untyped-def]
    golden(CRATE, "a.h")


def test_a_binary_and_a_library_make_crate_paths_ambiguous(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, {**CRATE, "src/main.rs": "fn main() {}\n"})
    with Graph.open(tmp_path) as g:
        refs = {(r.path, r.line): r for r in g.references("a.h")}
    assert refs[("src/lib.rs", 3)].confidence == "ambiguous" and "src/main.rs" in refs[("src/lib.rs", 3)].reason
    assert refs[("src/b/mod.rs", 2)].confidence == "confirmed"  # super:: does not depend on which crate root
    assert refs[("src/a.rs", 3)].confidence == "confirmed"


def test_a_glob_import_in_a_block_hides_the_module_item(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "Cargo.toml": '[package]\nname = "g"\nversion = "0.1.0"\n',
        "src/lib.rs": """
            pub mod other;
            pub fn h() {}  // # refs: def
            pub fn f() { use other::*; h(); }  // # refs: ambiguous(starts at another crate)
            pub fn g() { h(); }  // # refs: confirmed
        """,
        "src/other.rs": "pub fn h() {}  // # refs: ambiguous(another definition)\n",
    }, "lib.h")
