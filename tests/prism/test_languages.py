"""JavaScript, TypeScript, Go, Rust and Java: definitions by query, references by name, confirmed where scopes or
imports prove them (the detailed cases are in test_bind_*.py)."""

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
    """, "web.app.helper", "function", [(2, "reference", "confirmed"), (4, "definition", "confirmed"),
                                        (7, "reference", "confirmed")]),
    "typescript": ("web/types.ts", """
        interface Shape { area(): number; }
        export function area(s: Shape): number { return s.area(); }
        type Alias = Shape;
    """, "web.types.Shape", "interface", [(1, "definition", "confirmed"), (2, "reference", "confirmed"),
                                          (3, "reference", "confirmed")]),
    "go": ("svc/main.go", """
        package main

        type Server struct{ port int }

        func (s *Server) Start() error { return nil }

        func main() {
            s := &Server{port: 8080}
            s.Start()
        }
    """, "svc.main.Server", "type", [(3, "definition", "confirmed"), (5, "reference", "confirmed"),
                                     (8, "reference", "confirmed")]),
    "rust": ("core/lib.rs", """
        pub struct Engine { speed: u32 }
        impl Engine {
            pub fn run(&self) -> u32 { self.speed }
        }
        pub fn make() -> Engine { Engine { speed: 1 } }
    """, "core.lib.Engine.run", "function", [(3, "definition", "confirmed")]),
    "java": ("src/main/Greeter.java", """
        public class Greeter {
            public String greet(String name) { return "hi " + name; }
            public static void main(String[] args) {
                new Greeter().greet("x");
            }
        }
    """, "main.Greeter.Greeter.greet", "method", [(2, "definition", "confirmed"), (4, "reference", "ambiguous")]),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_definitions_and_references(tmp_path: Path, lang: str) -> None:
    path, text, qualname, kind, expected = CASES[lang]
    write_project(tmp_path, {path: text})
    with Graph.open(tmp_path) as g:
        sym = g.symbol(qualname)
        assert (sym.kind, sym.path, sym.language) == (kind, path, lang)
        refs = g.references(sym)
    assert [(r.line, r.kind, r.confidence) for r in refs] == expected
    for r in refs:  # an unproven reference says why
        assert (r.confidence == "confirmed") == (r.reason == "")


def test_other_languages_never_mix_with_python(tmp_path: Path) -> None:
    write_project(tmp_path, {"a.py": "def helper():\n    pass\n\nhelper()\n",
                             "b.js": "function helper() {}\nhelper();\n"})
    with Graph.open(tmp_path) as g:
        assert {r.path for r in g.references("a.helper")} == {"a.py"}
        assert {r.path for r in g.references("b.helper")} == {"b.js"}


def test_rename_in_javascript_renames_every_proven_use(tmp_path: Path) -> None:
    write_project(tmp_path, {"web/app.js": CASES["javascript"][1]})
    with Graph.open(tmp_path) as g:
        plan = g.rename_plan("web.app.helper", "assist")
        assert [(e.line, e.confidence) for e in plan.edits] == [(2, "confirmed"), (4, "confirmed"), (7, "confirmed")]
        g.apply(plan)
    text = (tmp_path / "web/app.js").read_text()
    assert "function assist(x)" in text and "return assist(1)" in text and "assist(2)" in text
    assert "helper" not in text


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
