"""``python -m tomo.models.llama_server ARGS``: llama-cpp-python's own server (same arguments), made AMX-safe.

llama.cpp repacks weights into "extra buffer types" for the CPU's fastest kernels; a build native to a CPU that
reports AMX (``-DGGML_NATIVE=ON``, pip's default when it builds from source) then runs AMX tile instructions, and a
virtual machine that reports AMX without granting it kills the process with a general protection fault (issue 27).
``llama_model_params.use_extra_bufts`` turns that off, but neither ``Llama()`` nor ``llama_cpp.server`` exposes it;
so this module wraps ``llama_model_default_params`` (which ``Llama`` calls for its defaults) before the server builds
its model, then runs the server's own ``main``. The cost is the repacked kernels' speed where they work: on a 2-core
portable build without AMX, Qwen2.5-Coder 1.5B generated 11.2 tokens/s with them off against 15.8 with them on.
"""

from __future__ import annotations

import sys
from typing import Any


def amx_safe() -> None:
    """Every model loaded from now on in this process gets ``use_extra_bufts = False``."""
    import llama_cpp
    import llama_cpp.llama_cpp as low

    original = low.llama_model_default_params
    if getattr(original, "tomo_amx_safe", False):
        return

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    defaults.tomo_amx_safe = True  # type: ignore[attr-defined]
    low.llama_model_default_params = defaults  # what llama_cpp.llama.Llama calls
    llama_cpp.llama_model_default_params = defaults  # the same function, re-exported by the package


def main(argv: list[str] | None = None) -> None:
    amx_safe()
    from llama_cpp.server.__main__ import main as server_main

    sys.argv = ["llama_cpp.server", *(sys.argv[1:] if argv is None else argv)]
    server_main()


if __name__ == "__main__":
    main()
