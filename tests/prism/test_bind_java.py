"""Java bindings: members in their class, static imports, `B.h()` for a class imported or of the same package;
classes with supertypes, overloads and everything else stay ambiguous.

Markers as in test_bind_js.py (``// # refs: ...`` per line, left to right).
"""

from __future__ import annotations

from tomo.prism import Graph

from .conftest import write_project

PROJECT = {
    "src/main/java/shop/Util.java": """
        package shop;

        public class Util {  // # refs: def
            public static int h(int x) { return x; }
            public static int twice(int x) { return h(h(x)); }
            static int shadow(int h) { return h; }
            Util() {}  // # refs: def
            static Util make() { return new Util(); }  // # refs: confirmed, confirmed
            class Inner extends Thread { Util u; }  // # refs: ambiguous(supertype)
        }
    """,
    "src/main/java/shop/Cart.java": """
        package shop;

        import static shop.Util.h;  // # refs: confirmed
        import shop.util.Other;

        public class Cart {
            int total(int n) { return Util.h(n) + h(n) + Other.h(n); }  // # refs: confirmed
            Util u = null;  // # refs: confirmed
            int local() { String Util = "x"; return Util.length(); }  // # refs: ambiguous(local), ambiguous(local)
        }
    """,
    "src/main/java/shop/util/Other.java": """
        package shop.util;

        import shop.Util;  // # refs: confirmed

        public class Other {
            public static int h(int x) { return Util.h(x); }  // # refs: confirmed
        }
    """,
    "src/test/java/shop/UtilTest.java": """
        package shop;

        public class UtilTest extends Base {
            void t() { Util.h(1); }  // # refs: ambiguous(supertype)
        }
    """,
}


def test_classes_resolve_in_the_file_by_import_and_by_package(golden) -> None:  # type: ignore[no-untyped-def]
    golden(PROJECT, "shop.Util.Util")


METHOD = {
    **PROJECT,
    "src/main/java/shop/Util.java": """
        package shop;

        public class Util {
            public static int h(int x) { return x; }  // # refs: def
            public static int twice(int x) { return h(h(x)); }  // # refs: confirmed, confirmed
            static int shadow(int h) { return h; }  // # refs: ambiguous(local), ambiguous(local)
            Util() {}
            static Util make() { return new Util(); }
            class Inner extends Thread { int g() { return h(1); } }  // # refs: ambiguous(supertype)
            Runnable r = new Runnable() { public void run() { h(2); } };  // # refs: ambiguous(supertype)
        }
    """,
    "src/main/java/shop/Cart.java": """
        package shop;

        import static shop.Util.h;  // # refs: confirmed
        import shop.util.Other;

        public class Cart {
            int total(int n) { return Util.h(n) + h(n) + Other.h(n); }  // # refs: confirmed, confirmed, ambiguous
            int local(Cart Util) { return Util.h(1); }  // # refs: ambiguous(property)
        }
    """,
    "src/main/java/shop/util/Other.java": """
        package shop.util;

        import shop.Util;

        public class Other {
            public static int h(int x) { return Util.h(x); }  // # refs: ambiguous(another definition), confirmed
        }
    """,
    "src/test/java/shop/UtilTest.java": """
        package shop;

        public class UtilTest extends Base {
            void t() { Util.h(1); }  // # refs: ambiguous(supertype)
        }
    """,
}


def test_static_members_through_static_imports_and_qualifiers(golden) -> None:  # type: ignore[no-untyped-def]
    golden(METHOD, "shop.Util.Util.h")


def test_overloads_and_object_methods_stay_ambiguous(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_project(tmp_path, {"p/A.java": """
        package p;

        class A {
            static int h(int x) { return x; }
            static int h(String s) { return 0; }
            int g() { return h(1) + A.h(2); }
            public String toString() { return "a"; }
            String s() { return toString(); }
        }
    """})
    with Graph.open(tmp_path) as g:
        h = [r for r in g.references("p.A.A.h") if r.line == 6]
        ts = [r for r in g.references("p.A.A.toString") if r.line == 8]
    assert [r.confidence for r in h] == ["ambiguous", "ambiguous"]
    assert "several members named `h`" in h[1].reason
    assert [r.confidence for r in ts] == ["ambiguous"] and "java.lang.Object" in ts[0].reason


def test_case_labels_and_annotation_elements_are_not_the_field(golden) -> None:  # type: ignore[no-untyped-def]
    golden({"p/K.java": """
        package p;

        @interface Tag { int h(); }  // # refs: ambiguous
        class K {
            static final int h = 1;  // # refs: def
            @Tag(h = 2)  // # refs: ambiguous(annotation)
            int f(int x) { switch (x) { case h: return h; } return 0; }  // # refs: ambiguous(case), confirmed
        }
    """}, "p.K.K.h")
