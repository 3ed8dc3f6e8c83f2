"""The exec gate's measuring hook: copied into the workspace as ``sitecustomize.py`` and run by every Python the
sandbox starts while the gate is on. It is not imported by tomo itself.

It records, per process, two things and writes them to ``$TOMO_OI_TRACE/trace-PID-N.json`` when the process exits:
- ``lines``: which lines of the *watched* files (the Python files the turn changed) executed;
- ``ran``: which files under the workspace had any code run at all (the repro gate asks whether a red check reached
  the code that was later fixed).

Cost is kept small: line events are asked for only in code objects of watched files. On Python 3.12+ it uses
``sys.monitoring`` (each line is reported once and then disabled; every other code object is disabled on its first
start); on 3.11 ``sys.settrace``, whose global function sees each call and returns a line tracer only for watched
files. A process killed before it exits writes nothing: its lines count as not run (``os._exit``, how forked workers
leave, writes first).
Nothing here raises: a broken configuration means no trace, which the gate reads as "not executed".
It must run on every Python the project might use, so it keeps to the standard library and plain syntax.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
from typing import Any, NoReturn


def _install(trace_dir: str) -> None:
    with open(os.path.join(trace_dir, "watch.json"), encoding="utf-8") as fh:
        config = json.load(fh)
    root = os.path.realpath(config["root"]).rstrip("/") + "/"
    watched = {os.path.realpath(p) for p in config.get("files", [])}
    skip = set(config.get("skip_dirs", []))
    lines: dict[str, set[int]] = {}
    ran: set[str] = set()
    cache: dict[str, tuple[str | None, bool]] = {}
    cwd = os.getcwd()

    def classify(filename: str) -> tuple[str | None, bool]:
        """(path under the workspace or None, watched?) for a code object's filename; cached per filename."""
        found = cache.get(filename)
        if found is not None:
            return found
        path: str | None = None
        if filename and not filename.startswith("<"):
            full = os.path.realpath(os.path.join(cwd, filename))
            if full.startswith(root) and not skip.intersection(full[len(root):].split("/")[:-1]):
                path = full
        found = (path, path is not None and path in watched)
        cache[filename] = found
        return found

    def write() -> None:
        name = os.path.join(trace_dir, f"trace-{os.getpid()}-{id(lines)}.json")
        data = {"pid": os.getpid(), "argv": sys.argv[:8], "lines": {k: sorted(v) for k, v in lines.items()},
                "ran": sorted(ran)}
        try:
            with open(name + ".tmp", "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(name + ".tmp", name)
        except OSError:
            pass

    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        tool = next((t for t in (5, 4, 3) if monitoring.get_tool(t) is None), None)
        if tool is None:
            return
        monitoring.use_tool_id(tool, "tomo-exec-gate")
        events = monitoring.events
        disable = monitoring.DISABLE

        def on_start(code: Any, offset: int) -> Any:
            path, watch = classify(code.co_filename)
            if path is not None:
                ran.add(path)
            if watch and path is not None:
                lines.setdefault(path, set())
                monitoring.set_local_events(tool, code, events.LINE)
            return disable

        def on_line(code: Any, number: int) -> Any:
            path = cache[code.co_filename][0]
            if path is not None:
                lines.setdefault(path, set()).add(number)
            return disable

        monitoring.register_callback(tool, events.PY_START, on_start)
        monitoring.register_callback(tool, events.LINE, on_line)
        monitoring.set_events(tool, events.PY_START)
    else:
        import threading

        tracers: dict[str, Any] = {}

        def tracer_for(path: str) -> Any:
            found = tracers.get(path)
            if found is None:
                seen = lines.setdefault(path, set())
                add = seen.add

                def found(frame: Any, event: str, arg: Any) -> Any:
                    if event == "line":
                        add(frame.f_lineno)
                    return found

                tracers[path] = found
            return found

        def on_call(frame: Any, event: str, arg: Any) -> Any:
            path, watch = cache.get(frame.f_code.co_filename) or classify(frame.f_code.co_filename)
            if path is None:
                return None
            ran.add(path)
            return tracer_for(path) if watch else None

        sys.settrace(on_call)
        threading.settrace(on_call)
    atexit.register(write)
    real_exit = os._exit

    def exit_now(status: int) -> NoReturn:
        """A forked worker (multiprocessing, a test runner's pool) leaves through os._exit, skipping atexit: write
        first, so the lines it ran count."""
        try:
            write()
        finally:
            real_exit(status)

    os._exit = exit_now


def _chain() -> None:
    """Runs the sitecustomize this file shadows (a distribution's or a virtualenv's), if there is one."""
    here = os.path.dirname(os.path.realpath(__file__))
    try:
        import importlib.machinery
        import importlib.util

        others = [p for p in sys.path if os.path.realpath(p or ".") != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
    except Exception:
        pass


_TRACE = os.environ.get("TOMO_OI_TRACE")
if _TRACE:
    with contextlib.suppress(Exception):
        _install(_TRACE)
_chain()
