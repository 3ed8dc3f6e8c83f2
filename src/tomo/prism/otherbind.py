"""Query time for JavaScript, TypeScript, Go, Rust and Java: is this occurrence the symbol, provably?

The index holds, for each occurrence, what it is bound to (:mod:`tomo.prism.scopes`). An occurrence is ``confirmed``
when that binding is the symbol's own declaration, or an import that resolves to the symbol's file and names it;
everything else that could be the symbol stays ``ambiguous`` with the reason.
"""

from __future__ import annotations

import marshal
import posixpath
import re
import sqlite3
from pathlib import Path
from typing import Any

from tomo.prism.model import Confidence, Symbol
from tomo.prism.pyextract import DEF, IMPORT

UNBOUND = "name match, not bound"
Classified = tuple[Confidence, str, str]

_WHY = {
    "property": f"{UNBOUND} (a property: its receiver is not typed)",
    "shorthand": "shorthand property `{NAME}`: renaming the variable there would rename the key",
    "free": f"{UNBOUND} (no declaration of `NAME` in scope)",
    "multi": "`NAME` is declared more than once in this scope",
    "with": "inside `with`: the binding depends on the object",
    "export alias": "the exported alias of another binding",
    "key": "a composite literal's key: a field name or a map key, which only types tell apart",
    "dot import": "the file dot-imports a package, which may declare `NAME`",
    "jsx tag": "a lowercase JSX tag (`<NAME>`) is an intrinsic element, not a name",
    "case label": "a `case` label names a constant of the switched value's type",
    "annotation element": "an annotation's element name",
    "associated item": "an item of an `impl` or `trait`, reached through a type or a value",
    "macro": "inside a macro call prism does not read as code",
    "path": "a segment of a path prism does not resolve",
    "lifetime": "a lifetime or a label",
    "attribute": "inside an attribute",
    "label": "a statement label",
    "inherited": "a class around this use has a supertype, which may declare `NAME` too",
    "object method": "`NAME` is also a method of java.lang.Object",
    "static import on demand": "the file has `import static ...*`, which may bring `NAME`",
}
_JS_EXTS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".d.ts")


class OtherBinder:
    """One query's view of the index for the non-Python languages (caches the file list and the symbol's facts)."""

    def __init__(self, conn: sqlite3.Connection, root: Path) -> None:
        self.conn = conn
        self.root = root
        self._facts: dict[str, dict[str, Any]] | None = None
        self._paths: set[str] | None = None
        self._data: dict[tuple[str, int, int], dict[str, Any]] = {}

    def paths(self) -> set[str]:
        if self._paths is None:
            self._paths = {r[0] for r in self.conn.execute("SELECT path FROM files")}
        return self._paths

    def def_data(self, sym: Symbol) -> dict[str, Any]:
        key = (sym.path, sym.line, sym.col)
        if key not in self._data:
            row = self.conn.execute(
                "SELECT d.data FROM defs d JOIN files f ON f.id=d.file_id WHERE f.path=? AND d.line=? AND d.col=?"
                " AND d.name=?", (sym.path, sym.line, sym.col, sym.name)).fetchone()
            self._data[key] = marshal.loads(row[0]) if row else {}
        return self._data[key]

    def classify(self, sym: Symbol, path: str, lang: str, occ: tuple[Any, ...]) -> Classified:
        line, col, _scope, recv, flags = occ
        is_def = bool(flags & DEF)
        if is_def and path == sym.path and line == sym.line and col == sym.col:
            return "confirmed", "", "definition"
        kind = "definition" if is_def else "import" if flags & IMPORT else "reference"
        if not isinstance(recv, str):
            return "ambiguous", UNBOUND, kind
        tag, _, rest = recv.partition(":")
        if is_def and not (tag == "d" and path == sym.path and rest.startswith(f"{sym.line}:{sym.col}:")):
            # another definition is never this symbol (a Java constructor's name is its class's: it resolves to it)
            where = " (a local or a member)" if tag == "d" and rest.endswith(":l") else ""
            return "ambiguous", f"another definition named `{sym.name}`{where}", kind
        if tag == "d":
            dline, dcol, where = rest.split(":")
            if path == sym.path and (int(dline), int(dcol)) == (sym.line, sym.col):
                return "confirmed", "", kind
            if where == "l":
                return "ambiguous", f"`{sym.name}` here is a local declared at line {dline}, not this symbol", kind
            return "ambiguous", f"`{sym.name}` here is {path}'s own top-level declaration (line {dline})", kind
        if tag == "i":
            name, _, source = rest.partition(":")
            return self._imported(sym, path, lang, name, source, kind)
        if tag == "p":
            return self._package_scope(sym, path, kind)
        if tag == "q":
            return self._java_same_package_type(sym, path, kind)
        if tag == "n":
            return "ambiguous", f"`{sym.name}` here names the module {rest!r}", kind
        why = _WHY.get(rest, f"{UNBOUND} ({rest})")
        return "ambiguous", why.replace("NAME", sym.name), kind

    def file_facts(self, path: str) -> dict[str, Any]:
        """What a file's binder recorded about it as a whole (Go: its package name and package-level names)."""
        if self._facts is None:
            self._facts = {}
            for p, info in self.conn.execute("SELECT path, info FROM files WHERE lang IN ('go', 'java', 'rust')"):
                self._facts[p] = (marshal.loads(info) if info else {}).get("bind") or {}
        return self._facts.get(path, {})

    def _go_package(self, path: str) -> list[str]:
        """Every indexed file of the Go package ``path`` belongs to: same directory, same package clause."""
        pkg = self.file_facts(path).get("package")
        d = posixpath.dirname(path)
        assert self._facts is not None
        return sorted(p for p, f in self._facts.items()
                      if p.endswith(".go") and posixpath.dirname(p) == d and f.get("package") == pkg)

    def _go_unique(self, sym: Symbol) -> str:
        """Why ``sym`` is not the one package-level binding of its name in its package ("" when it is)."""
        if not self.def_data(sym).get("top"):
            return f"`{sym.name}` is not declared once at the top of {sym.path}"
        others = [p for p in self._go_package(sym.path) if p != sym.path
                  and sym.name in self.file_facts(p).get("tops", ())]
        return f"{others[0]} also declares `{sym.name}` at package level" if others else ""

    def _package_scope(self, sym: Symbol, path: str, kind: str) -> Classified:
        if sym.language != "go" or path not in self._go_package(sym.path):
            return "ambiguous", f"{UNBOUND} (no declaration of `{sym.name}` in scope)", kind
        why = self._go_unique(sym)
        return ("ambiguous", why, kind) if why else ("confirmed", "", kind)

    def _go_import_path(self, sym: Symbol) -> str | None:
        """The import path of ``sym``'s package, from the nearest go.mod at or above its directory."""
        d = posixpath.dirname(sym.path)
        parts = d.split("/") if d else []
        for k in range(len(parts), -1, -1):
            gomod = self.root.joinpath(*parts[:k], "go.mod")
            try:
                text = gomod.read_text("utf-8", "replace")
            except OSError:
                continue
            m = re.search(r"^\s*module\s+\"?([^\s\"]+)", text, re.M)
            if m is None:
                return None
            return "/".join([m.group(1), *parts[k:]])
        return None

    def _go_imported(self, sym: Symbol, name: str, source: str, kind: str) -> Classified:
        ipath, _, rest = source.partition("|")
        local, _, explicit = rest.partition("|")
        own = self._go_import_path(sym)
        if own is None:
            return "ambiguous", f"no go.mod above {sym.path} says which import path is its package", kind
        if ipath != own:
            return "ambiguous", f"`{local}` is the package {ipath}, not {own}", kind
        why = self._go_unique(sym)
        if why:
            return "ambiguous", why, kind
        pkg = self.file_facts(sym.path).get("package")
        if explicit != "1" and pkg != local:
            return "ambiguous", f"the package at {ipath} is named `{pkg}`, not `{local}`", kind
        return ("confirmed", "", kind) if name == sym.name else ("ambiguous", f"names `{name}`", kind)

    def _rust_module(self, path: str) -> tuple[str, list[str]] | None:
        """(crate directory, module path) of a file under a crate's ``src/`` (not ``src/bin``); None otherwise."""
        parts = path.split("/")
        for k in range(len(parts) - 2, -1, -1):
            if parts[k] != "src" or not self.root.joinpath(*parts[:k], "Cargo.toml").is_file():
                continue
            rel = parts[k + 1 :]
            if not rel or rel[0] == "bin" or not rel[-1].endswith(".rs"):
                return None
            rel[-1] = rel[-1][:-3]
            if rel[-1] == "mod" or (len(rel) == 1 and rel[0] in ("lib", "main")):
                rel = rel[:-1]
            return "/".join(parts[:k]), rel
        return None

    def _rust_imported(self, sym: Symbol, path: str, name: str, source: str, kind: str) -> Classified:
        ipath, _, inline = source.partition("|")
        here, there = self._rust_module(path), self._rust_module(sym.path)
        if here is None or there is None or here[0] != there[0]:
            return "ambiguous", f"`{ipath}` is not provably {sym.path}'s crate (no Cargo.toml with src/ above both)", \
                kind
        segs = ipath.split("::") if ipath else []
        base = here[1] + (inline.split("::") if inline else [])
        if segs[:1] == ["crate"]:
            src = posixpath.join(here[0], "src")
            if all(self.root.joinpath(src, f).is_file() for f in ("lib.rs", "main.rs")):
                return "ambiguous", "`crate` could be the library or the binary (src/lib.rs and src/main.rs)", kind
            target, rest = [], segs[1:]
        elif segs[:1] == ["self"]:
            target, rest = base, segs[1:]
        elif segs[:1] == ["super"]:
            target, rest = base, segs
            while rest[:1] == ["super"]:
                if not target:
                    return "ambiguous", f"`{ipath}` climbs above the crate root", kind
                target, rest = target[:-1], rest[1:]
        else:
            return "ambiguous", f"`{ipath}` starts at another crate or a module prism does not follow", kind
        target = target + rest
        if target != there[1]:
            return "ambiguous", f"`{ipath}` is the module {'::'.join(['crate', *target])}, not " \
                                f"{'::'.join(['crate', *there[1]])}", kind
        if not self.def_data(sym).get("top"):
            return "ambiguous", f"`{sym.name}` is not the one item of that name at the top of {sym.path}", kind
        return ("confirmed", "", kind) if name == sym.name else ("ambiguous", f"names `{name}`", kind)

    def _java_class_unique(self, package: str, cls: str) -> bool:
        self.file_facts("")
        assert self._facts is not None
        return sum(cls in f.get("classes", ()) for p, f in self._facts.items()
                   if p.endswith(".java") and f.get("package", "") == package) == 1

    def _java_same_package_type(self, sym: Symbol, path: str, kind: str) -> Classified:
        package = self.file_facts(sym.path).get("package", "")
        if sym.language != "java" or not self.def_data(sym).get("top"):
            return "ambiguous", f"{UNBOUND} (not a class declared in this file or imported)", kind
        if self.file_facts(path).get("package", "") != package:
            return "ambiguous", f"{path} is not in {sym.path}'s package and does not import `{sym.name}`", kind
        if not self._java_class_unique(package, sym.name):
            return "ambiguous", f"the package {package or '(default)'} has several classes named `{sym.name}`", kind
        return "confirmed", "", kind

    def _java_imported(self, sym: Symbol, path: str, name: str, source: str, kind: str) -> Classified:
        where, _, rest = source.partition("|")
        data = self.def_data(sym)
        package = self.file_facts(sym.path).get("package", "")
        if rest == "type":  # import a.B;
            if not data.get("top") or where != package or not self._java_class_unique(package, sym.name):
                return "ambiguous", f"imports {where}.{name}, not provably {sym.qualname}", kind
            return ("confirmed", "", kind) if name == sym.name else ("ambiguous", f"imports `{name}`", kind)
        owner = data.get("owner")
        if not owner:
            return "ambiguous", f"`{sym.name}` is not a member of a top-level class", kind
        if rest == "static":  # import static a.B.h;
            ok = where == (f"{package}.{owner}" if package else owner)
        elif where == "file":
            ok = path == sym.path and rest == data.get("owner_at")
        elif where == "fqn":
            ok = rest == (f"{package}.{owner}" if package else owner)
        else:  # pkg: a class of the use's own package
            ok = rest == owner and self.file_facts(path).get("package", "") == package
        if not ok:
            return "ambiguous", f"a member of another class than {owner}", kind
        if not data.get("single"):
            return "ambiguous", f"{owner} has several members named `{sym.name}` or may inherit more", kind
        if not self._java_class_unique(package, owner):
            return "ambiguous", f"the package {package or '(default)'} has several classes named `{owner}`", kind
        return ("confirmed", "", kind) if name == sym.name else ("ambiguous", f"names `{name}`", kind)

    def _imported(self, sym: Symbol, path: str, lang: str, name: str, source: str, kind: str) -> Classified:
        if lang == "go":
            return self._go_imported(sym, name, source, kind)
        if lang == "rust":
            return self._rust_imported(sym, path, name, source, kind)
        if lang == "java":
            return self._java_imported(sym, path, name, source, kind)
        target = self.module_file(path, lang, source)
        if target is None or target.startswith("?"):
            why = target[1:] if target else f"`{source}` is not a module in the index"
            return "ambiguous", f"imported from {source!r}: {why}", kind
        if target != sym.path:
            return "ambiguous", f"imported from {target}, not from {sym.path}", kind
        data = self.def_data(sym)
        if not data.get("top"):
            return "ambiguous", f"imported from {target}, where `{sym.name}` is not the one top-level binding", \
                kind
        if name == sym.name or (name == "default" and data.get("default")):
            return "confirmed", "", kind
        return "ambiguous", f"imports `{name}` from {target}", kind

    def module_file(self, path: str, lang: str, source: str) -> str | None:
        """The indexed file an import of ``source`` in ``path`` loads; ``?why`` when it cannot say which."""
        if lang in ("javascript", "typescript", "tsx"):
            return self._js_module(path, source)
        return None

    def _js_module(self, path: str, source: str) -> str | None:
        if not source.startswith(("./", "../")) and source not in (".", ".."):
            return "?a package or path alias, not a relative path"
        base = posixpath.normpath(posixpath.join(posixpath.dirname(path), source))
        if base.startswith("../") or base == "..":
            return "?outside the indexed root"
        stems = [base]
        if base.endswith((".js", ".jsx", ".mjs", ".cjs")):  # TypeScript's ESM style: './a.js' is a.ts
            stems.append(base[: base.rfind(".")])
        index = "index" if base == "." else f"{base}/index"
        cands = {base} | {s + e for s in stems for e in _JS_EXTS} | {index + e for e in _JS_EXTS}
        found = sorted(c for c in cands if c in self.paths())
        if len(found) > 1:
            return f"?could be any of {', '.join(found)}"
        return found[0] if found else None
