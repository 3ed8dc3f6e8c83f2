"""Does this checkout's prism index a tree into the same rows as another checkout's? (a check, not a timing)

    python bench/prism_same_rows.py --base-src /path/to/other/checkout/src ROOT [ROOT ...]

Each ROOT is copied to a temporary directory and indexed twice, once with ``--base-src``'s prism and once with this
checkout's, each in a fresh process. The files, defs and refs tables are decoded (every marshal blob, including the
per-scope bindings inside ``files.info``) and compared per path, so a change in file ids or row order is no
difference but any changed fact is. Prints one line per root and exits 1 when any root differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DUMP = r"""
import hashlib, json, marshal, sqlite3, sys
from pathlib import Path
root = Path(sys.argv[1]); out = Path(sys.argv[2]); workers = int(sys.argv[3]) or None
from tomo.prism import Graph
g = Graph.open(root, workers=workers)
conn = g.conn

def canon(x):
    # dicts compare as sorted items; lists of facts found in capture order compare as sorted lists (tree-sitter's
    # QueryCursor.captures does not return captures in a stable order, so neither checkout's order is meaningful)
    if isinstance(x, dict):
        return sorted((k, canon(v)) for k, v in x.items())
    return x

def dec_info(blob):
    if not blob:
        return blob
    info = marshal.loads(blob)
    if isinstance(info, dict) and "binds" in info:
        info["binds"] = {k: {n: sorted(b, key=repr) for n, b in marshal.loads(v).items()}
                         for k, v in info["binds"].items()}
        for key in ("returns", "yields", "fixtures"):
            info[key] = {k: sorted(v, key=repr) for k, v in (info.get(key) or {}).items()}
        info["narrow"] = sorted(info.get("narrow") or [], key=repr)
    return canon(info)

rows = {}
paths = {}
for fid, path, size, h, lang, module, imp, is_pkg, error, info in conn.execute(
        "SELECT id, path, size, hash, lang, module, import_name, is_pkg, error, info FROM files"):
    paths[fid] = path
    rows[path] = {"file": [size, h, lang, module, imp, is_pkg, error, dec_info(info)], "defs": [], "refs": []}
for fid, *d, data in conn.execute("SELECT * FROM defs"):
    rows[paths[fid]]["defs"].append([*d, canon(marshal.loads(data))])
for fid, name, data in conn.execute("SELECT * FROM refs"):
    rows[paths[fid]]["refs"].append([name, sorted(marshal.loads(data), key=repr)])
digest = {}
for path, r in rows.items():
    r["defs"].sort(key=repr)
    r["refs"].sort(key=repr)
    digest[path] = {k: hashlib.sha256(repr(v).encode()).hexdigest() for k, v in r.items()}
n = {"files": len(rows), "defs": sum(len(r["defs"]) for r in rows.values()),
     "refs": sum(len(r["refs"]) for r in rows.values()),
     "occurrences": sum(len(x[1]) for r in rows.values() for x in r["refs"])}
out.write_text(json.dumps({"digest": digest, "counts": n}))
g.close()
"""


def dump(src: Path, root: Path, workers: int, out: Path) -> dict:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory(prefix="prism-rows-") as tmp:
        copy = Path(tmp) / root.name
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".tomo"), symlinks=True)
        subprocess.run([sys.executable, "-c", DUMP, str(copy), str(out), str(workers)], check=True,
                       env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"})
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("roots", nargs="+", type=Path)
    ap.add_argument("--base-src", type=Path, required=True, help="the src/ of the checkout to compare against")
    ap.add_argument("--workers", type=int, default=0, help="worker processes (0: prism's default)")
    args = ap.parse_args()
    mine = Path(__file__).resolve().parents[1] / "src"
    bad = 0
    with tempfile.TemporaryDirectory(prefix="prism-rows-out-") as out:
        for root in args.roots:
            a = dump(args.base_src.resolve(), root.resolve(), args.workers, Path(out) / "a.json")
            b = dump(mine, root.resolve(), args.workers, Path(out) / "b.json")
            da, db = a["digest"], b["digest"]
            diff = sorted(p for p in set(da) | set(db) if da.get(p) != db.get(p))
            same = not diff and a["counts"] == b["counts"]
            bad += not same
            h = hashlib.sha256(json.dumps(da, sort_keys=True).encode()).hexdigest()[:12]
            print(f"{root.name}: {'SAME' if same else 'DIFFERENT'} rows; base {a['counts']}, this {b['counts']}, "
                  f"digest {h}")
            for p in diff[:20]:
                parts = [k for k in ("file", "defs", "refs") if da.get(p, {}).get(k) != db.get(p, {}).get(k)]
                print(f"  {p}: {', '.join(parts) if p in da and p in db else 'only in one index'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
