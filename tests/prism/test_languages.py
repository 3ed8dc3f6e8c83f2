"""JavaScript, TypeScript, Go, Rust and Java: definitions by query, references by name, never confirmed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomo.prism import Graph

from .conftest import write_project

CASES = {
    "javascript": ("web/app.js", """
        class Widget {
          render() { return helper(1); }
        }
        function helper(x) { return x; }
        const w = new Widget();
        w.render();
        helper(2);
    """, "web.app.helper", "function", [(2, "reference"), (4, "definition"), (7, "reference")]),
    "typescript": ("web/types.ts", """
        interface Shape { area(): number; }
        export function area(s: Shape): number { return s.area(); }
        type Alias = Shape;
    """, "web.types.Shape", "interface", [(1, "definition"), (2, "reference"), (3, "reference")]),
    "go": ("svc/main.go", """
        package main

        type Server struct{ port int }

        func (s *Server) Start() error { return nil }

        func main() {
            s := &Server{port: 8080}
            s.Start()
        }
    """, "svc.main.Server", "type", [(3, "definition"), (5, "reference"), (8, "reference")]),
    "rust": ("core/lib.rs", """
        pub struct Engine { speed: u32 }
        impl Engine {
            pub fn run(&self) -> u32 { self.speed }
        }
        pub fn make() -> Engine { Engine { speed: 1 } }
    """, "core.lib.Engine.run", "function", [(3, "definition")]),
    "java": ("src/main/Greeter.java", """
        public class Greeter {
            public String greet(String name) { return "hi " + name; }
            public static void main(String[] args) {
                new Greeter().greet("x");
            }
        }
    """, "main.Greeter.Greeter.greet", "method", [(2, "definition"), (4, "reference")]),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_definitions_and_unbound_references(tmp_path: Path, lang: str) -> None:
    path, text, qualname, kind, expected = CASES[lang]
    write_project(tmp_path, {path: text})
    with Graph.open(tmp_path) as g:
        sym = g.symbol(qualname)
        assert (sym.kind, sym.path, sym.language) == (kind, path, lang)
        refs = g.references(sym)
    assert [(r.line, r.kind) for r in refs] == expected
    for r in refs:
        if r.kind == "definition":
            assert r.confidence == "confirmed"
        else:  # never bound in these languages: honest about it
            assert (r.confidence, r.reason) == ("ambiguous", "name match, not bound")


def test_other_languages_never_mix_with_python(tmp_path: Path) -> None:
    write_project(tmp_path, {"a.py": "def helper():\n    pass\n\nhelper()\n",
                             "b.js": "function helper() {}\nhelper();\n"})
    with Graph.open(tmp_path) as g:
        assert {r.path for r in g.references("a.helper")} == {"a.py"}
        assert {r.path for r in g.references("b.helper")} == {"b.js"}


def test_rename_in_other_languages_is_all_ambiguous_but_the_definition(tmp_path: Path) -> None:
    write_project(tmp_path, {"web/app.js": CASES["javascript"][1]})
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("web.app.helper", "assist")
        assert [(e.line, e.confidence) for e in plan.edits] == [(2, "ambiguous"), (4, "confirmed"), (7, "ambiguous")]
        g.apply(plan)
    assert "function assist(x)" in (tmp_path / "web/app.js").read_text()
    assert "helper(2)" in (tmp_path / "web/app.js").read_text()


def test_columns_are_characters_not_bytes(tmp_path: Path) -> None:
    write_project(tmp_path, {"web/i18n.js": "const s = 'héllo'; function greet() {}\nconst t = 'ü'; greet();\n",
                             "i18n.py": "s = 'héllo'; x = 1\ndef greet():\n    pass\nt = 'ü'; greet()\n"})
    with Graph.open(tmp_path) as g:
        assert [(r.line, r.col) for r in g.references("web.i18n.greet")] == [(1, 28), (2, 15)]
        assert [(r.line, r.col) for r in g.references("i18n.greet")] == [(2, 4), (4, 9)]
        g.apply(g.rename_plan("web.i18n.greet", "hi"), include_ambiguous=True)
        g.apply(g.rename_plan("i18n.greet", "hi"))
    assert (tmp_path / "web/i18n.js").read_text() == "const s = 'héllo'; function hi() {}\nconst t = 'ü'; hi();\n"
    assert (tmp_path / "i18n.py").read_text() == "s = 'héllo'; x = 1\ndef hi():\n    pass\nt = 'ü'; hi()\n"
