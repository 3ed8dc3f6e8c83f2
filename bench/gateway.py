"""Per-call harness overhead of each gateway adapter, against a loopback server speaking its wire format.

For each provider a server runs in its own process (so it does not share the GIL with the client) and answers every
request with the same reply: a short text plus one tool call. Contenders, taking turns call by call so that drift
on the machine hits all alike, median over N calls each after a warm-up:
- raw httpx: POST of a pre-built body + ``response.json()`` on one kept-alive ``httpx.AsyncClient``: the floor;
- tomo: ``model.chat(messages, tools)``: to_request + retry wrapper + from_response + text-call recovery check;
- the official SDK (``openai``, ``anthropic``, ``ollama``), when installed, making the same call with its defaults.
The overhead is adapter minus raw; the ratio is adapter / raw.

Run: ``python bench/gateway.py`` (``--calls 1000``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "models"), str(ROOT)]

import httpx  # noqa: E402
from loopback import Canned, LoopbackServer, anthropic_body, ollama_body, openai_body  # noqa: E402

from bench._report import table, write_section  # noqa: E402
from tomo.models import Message, ToolCall, ToolSpec  # noqa: E402
from tomo.models import anthropic as anthropic_mod  # noqa: E402
from tomo.models import ollama as ollama_mod  # noqa: E402
from tomo.models import openai as openai_mod  # noqa: E402
from tomo.models.anthropic import AnthropicModel  # noqa: E402
from tomo.models.ollama import OllamaModel  # noqa: E402
from tomo.models.openai import OpenAIModel  # noqa: E402

TOOLS = [
    ToolSpec("read_file", "Read a file of the workspace.",
             {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ToolSpec("grep", "Search the workspace.", {"type": "object", "properties": {"pattern": {"type": "string"}}}),
]
CALL = ToolCall("call_1", "grep", {"pattern": "def main"})
MESSAGES = [
    Message.system("You are a careful engineer. Use the tools."),
    Message.user("Where is main defined, and what does it do?"),
    Message.assistant("Searching.", [CALL]),
    Message.tool(CALL, "src/app.py:12: def main() -> None:"),
    Message.user("Read it."),
]
REPLY_CALL = [("call_2", "read_file", {"path": "src/app.py"})]
BODIES: dict[str, Any] = {
    "openai": openai_body("Reading it.", REPLY_CALL, "tool_calls"),
    "anthropic": anthropic_body("Reading it.", REPLY_CALL, "tool_use"),
    "ollama": ollama_body("Reading it.", REPLY_CALL, "stop"),
}
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "ollama": "/api/chat"}
Call = Callable[[], Awaitable[Any]]


def serve(provider: str) -> None:
    """Child process: answer every POST with the provider's reply until stdin closes."""
    canned = Canned(body=BODIES[provider])
    server = LoopbackServer(responder=lambda _: canned)
    server.record = False
    with server:
        print(server.url, flush=True)
        sys.stdin.read()


async def timed(contenders: dict[str, Call], calls: int, warmup: int) -> dict[str, list[float]]:
    """Seconds per call for each contender; they take turns call by call, in a shuffled order each round."""
    for call in contenders.values():
        for _ in range(warmup):
            await call()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders.items())
    rng = random.Random(0)
    for _ in range(calls):
        rng.shuffle(order)  # no contender always runs right after another's garbage
        for name, call in order:
            start = time.perf_counter()
            await call()
            samples[name].append(time.perf_counter() - start)
    return samples


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def paired_ms(a: list[float], b: list[float]) -> float:
    """Median of per-round differences: robust to load on a shared machine drifting during the run."""
    return statistics.median(x - y for x, y in zip(a, b, strict=True)) * 1000


def sdk_client(provider: str, url: str) -> Any:
    """The official SDK's async client (a peer making the same call), or None when it is not installed."""
    try:
        if provider == "openai":
            import openai

            return openai.AsyncOpenAI(api_key="sk-bench", base_url=url + "/v1")
        if provider == "anthropic":
            import anthropic

            return anthropic.AsyncAnthropic(api_key="sk-bench", base_url=url)
        if provider == "ollama":
            import ollama

            return ollama.AsyncClient(host=url)
    except ImportError:
        return None
    return None


async def measure(provider: str, url: str, calls: int, warmup: int) -> dict[str, list[float]]:
    path = PATHS[provider]
    model: Any
    if provider == "openai":
        model = OpenAIModel("gpt-test", base_url=url + "/v1", api_key="sk-bench")
        body = openai_mod.to_request("gpt-test", MESSAGES, TOOLS)
        headers = {"Authorization": "Bearer sk-bench"}
    elif provider == "anthropic":
        model = AnthropicModel("claude-test", base_url=url, api_key="sk-bench")
        body = anthropic_mod.to_request("claude-test", MESSAGES, TOOLS)
        headers = {"x-api-key": "sk-bench", "anthropic-version": anthropic_mod.API_VERSION}
    else:
        model = OllamaModel("qwen-test", base_url=url)
        body = ollama_mod.to_request("qwen-test", MESSAGES, TOOLS)
        headers = {}
    kwargs = {k: v for k, v in body.items() if k != "stream"}
    sdk = sdk_client(provider, url)

    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as client:

        async def raw() -> Any:
            response = await client.post(path, json=body)
            response.raise_for_status()
            return response.json()

        async def adapter() -> Any:
            reply = await model.chat(MESSAGES, TOOLS)
            assert reply.tool_calls[0].name == "read_file"
            return reply

        contenders: dict[str, Call] = {"raw": raw, "tomo": adapter}
        if sdk is not None:
            create = {"openai": lambda: sdk.chat.completions.create, "anthropic": lambda: sdk.messages.create,
                      "ollama": lambda: sdk.chat}[provider]()
            contenders["sdk"] = lambda: create(**kwargs)
        try:
            return await timed(contenders, calls, warmup)
        finally:
            await model.aclose()
            if sdk is not None and hasattr(sdk, "close"):
                await sdk.close()


def pure_us(provider: str, rounds: int = 5000) -> float:
    """Microseconds for the adapter's own work alone: to_request + from_response, no network."""
    module: Any = {"openai": openai_mod, "anthropic": anthropic_mod, "ollama": ollama_mod}[provider]
    names = [t.name for t in TOOLS]
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(rounds):
            module.to_request("m", MESSAGES, TOOLS)
            module.from_response(BODIES[provider], names)
        samples.append((time.perf_counter() - start) / rounds * 1e6)
    return min(samples)


def run_provider(provider: str, calls: int, warmup: int) -> dict[str, list[float]]:
    child = subprocess.Popen([sys.executable, __file__, "--serve", provider], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        return asyncio.run(measure(provider, url, calls, warmup))
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--serve", choices=sorted(BODIES), help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="print the table, do not touch docs/benchmarks.md")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    rows: list[list[object]] = []
    for provider in ("openai", "anthropic", "ollama"):
        result = run_provider(provider, args.calls, args.warmup)
        raw, tomo, sdk = ms(result["raw"]), ms(result["tomo"]), result.get("sdk")
        overhead = paired_ms(result["tomo"], result["raw"])
        rows.append([
            provider, f"{raw:.3f}", f"{tomo:.3f}", f"{overhead:+.3f}", f"{(raw + overhead) / raw:.2f}x",
            f"{pure_us(provider):.1f}",
            f"{ms(sdk):.3f} ({paired_ms(sdk, result['raw']):+.3f})" if sdk else "SDK not installed",
        ])
        print(" | ".join(str(c) for c in rows[-1]), flush=True)
    body = table(["provider", "raw httpx ms", "tomo adapter ms", "tomo overhead ms (paired)", "tomo / raw",
                  "to_request + from_response µs", "official SDK ms (overhead)"], rows)
    body += (
        f"\n\nMedian of {args.calls:,} sequential `chat` calls per contender after {args.warmup} warm-up calls, "
        "the contenders taking turns call by call in a shuffled order. Each server runs in its own process on "
        "127.0.0.1 and answers a 5-message conversation with 2 tools by a text plus one tool call. *raw httpx* "
        "posts a pre-built body and decodes the JSON on one kept-alive client (the floor); the tomo adapter builds "
        "the request from tomo messages, sends it through the retry wrapper and parses the reply (with the "
        "text-call recovery check). The overhead columns are the median of per-round differences against raw "
        "httpx (paired, so load drifting on a shared machine cancels out); the ratio is (raw + overhead) / raw. "
        "The µs column is the translation work alone, without the network (best of 5 runs of 5,000). The SDK "
        "column is the official `openai` / `anthropic` / `ollama` package making the same call against the same "
        "server."
    )
    if args.no_write:
        print(body)
        return
    doc = write_section("gateway", "Gateway: per-call adapter overhead", "python bench/gateway.py", body)
    print(f"wrote {doc}")


if __name__ == "__main__":
    main()
