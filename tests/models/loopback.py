"""A real HTTP server on 127.0.0.1 that answers with canned provider bodies, for the adapter tests and the bench.

Not a mock of httpx: the adapters open real sockets, send real requests, and read real (optionally chunked,
streamed) responses. Each test queues the answers it wants (``push``) and inspects what the server received
(``requests``). The ``wire_*`` builders produce each provider's real wire format from a neutral description.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Canned:
    """One answer: a whole body, or ``chunks`` streamed with chunked encoding (one flush per chunk)."""

    status: int = 200
    body: Any = None  # dict/list -> JSON; str/bytes as is
    chunks: list[str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    stall_s: float = 0.0  # after the chunks, before the stream ends: a server that hangs mid-stream
    content_type: str = "application/json"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


class LoopbackServer:
    """``with LoopbackServer() as server: server.push(Canned(...)); ... server.url``."""

    def __init__(self, responder: Callable[[Received], Canned] | None = None) -> None:
        self.queue: deque[Canned] = deque()
        self.requests: list[Received] = []
        self.routes: dict[str, Canned] = {}  # GET path -> answer (probes)
        self.responder = responder
        self.record = True
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else headers and body in two writes meet delayed ACK: +40 ms a call

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                received = Received("GET", self.path, dict(self.headers), None)
                owner._answer(self, owner.routes.get(self.path.split("?")[0]) or Canned(404, {"error": "no route"}),
                              received)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                received = Received("POST", self.path, dict(self.headers), body)
                if owner.record:
                    owner.requests.append(received)
                if owner.queue:
                    canned = owner.queue.popleft()
                elif owner.responder is not None:
                    canned = owner.responder(received)
                else:
                    canned = Canned(418, {"error": {"message": "loopback server: no canned answer left"}})
                owner._answer(self, canned, received)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return None  # a client that timed out and hung up is expected in the timeout tests

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def push(self, *canned: Canned) -> LoopbackServer:
        self.queue.extend(canned)
        return self

    @property
    def posts(self) -> list[Any]:
        return [r.json for r in self.requests]

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, canned: Canned, received: Received) -> None:
        if canned.delay_s:
            time.sleep(canned.delay_s)
        handler.send_response(canned.status)
        handler.send_header("Content-Type", canned.content_type)
        for key, value in canned.headers.items():
            handler.send_header(key, value)
        if canned.chunks is not None:
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            for chunk in canned.chunks:
                data = chunk.encode()
                handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                handler.wfile.flush()
            if canned.stall_s:
                time.sleep(canned.stall_s)
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
            return
        body = canned.body
        data = body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else
                                                      json.dumps(body).encode())
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()


# ---- the providers' wire formats ------------------------------------------------------------------------------
# A call is (id, name, arguments) where arguments is a dict, or a str sent verbatim (possibly invalid JSON).

Call = tuple[str, str, Any]


def _args_text(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args)


def openai_body(content: str | None, calls: list[Call] = (), finish: str = "stop", model: str = "gpt-test") -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": _args_text(args)}}
            for cid, name, args in calls
        ]
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


def openai_stream(text_parts: list[str], calls: list[tuple[str, str, list[str]]], finish: str) -> list[str]:
    """SSE chunks: text deltas, then each call with its argument string split into the given fragments."""
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        body = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-test",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        return f"data: {json.dumps(body)}\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": part}) for part in text_parts]
    for index, (cid, name, fragments) in enumerate(calls):
        out.append(chunk({"tool_calls": [{"index": index, "id": cid, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]}) for f in fragments]
    out.append(chunk({}, finish))
    usage = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [],
             "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}
    out += [f"data: {json.dumps(usage)}\n\n", "data: [DONE]\n\n"]
    return out


def anthropic_body(text: str | None, calls: list[Call] = (), stop: str = "end_turn", model: str = "claude-test") -> Any:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": cid, "name": name, "input": args} for cid, name, args in calls]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 11, "output_tokens": 7}}


def anthropic_stream(text_parts: list[str], calls: list[tuple[str, str, list[str]]], stop: str) -> list[str]:
    def ev(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    out = [ev("message_start", {"message": {"id": "msg_1", "type": "message", "role": "assistant",
                                            "model": "claude-test", "content": [], "stop_reason": None,
                                            "usage": {"input_tokens": 11, "output_tokens": 1}}}),
           ev("ping", {})]
    index = 0
    if text_parts:
        out.append(ev("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
        out += [ev("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}})
                for p in text_parts]
        out.append(ev("content_block_stop", {"index": 0}))
        index = 1
    for cid, name, fragments in calls:
        out.append(ev("content_block_start", {"index": index, "content_block": {"type": "tool_use", "id": cid,
                                                                                "name": name, "input": {}}}))
        out += [ev("content_block_delta", {"index": index, "delta": {"type": "input_json_delta", "partial_json": f}})
                for f in fragments]
        out.append(ev("content_block_stop", {"index": index}))
        index += 1
    out.append(ev("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": {"output_tokens": 7}}))
    out.append(ev("message_stop", {}))
    return out


def ollama_body(content: str, calls: list[Call] = (), done_reason: str = "stop", model: str = "qwen-test") -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": cid, "function": {"name": name, "arguments": args}} if cid else
                                 {"function": {"name": name, "arguments": args}} for cid, name, args in calls]
    return {"model": model, "created_at": "2026-01-01T00:00:00Z", "message": message, "done": True,
            "done_reason": done_reason, "prompt_eval_count": 11, "eval_count": 7}


def ollama_stream(text_parts: list[str], calls: list[Call], done_reason: str) -> list[str]:
    """JSON lines: text pieces, then each call whole (Ollama does not split arguments), then the final line."""
    def line(message: dict[str, Any], **extra: Any) -> str:
        return json.dumps({"model": "qwen-test", "created_at": "2026-01-01T00:00:00Z",
                           "message": {"role": "assistant", **message}, "done": False, **extra}) + "\n"

    out = [line({"content": p}) for p in text_parts]
    out += [line({"content": "", "tool_calls": [{"function": {"name": n, "arguments": a}}]}) for _, n, a in calls]
    out.append(line({"content": ""}, done=True, done_reason=done_reason, prompt_eval_count=11, eval_count=7))
    return out


def sse(chunks: list[str]) -> Canned:
    return Canned(chunks=chunks, content_type="text/event-stream")


def jsonl(chunks: list[str]) -> Canned:
    return Canned(chunks=chunks, content_type="application/x-ndjson")


def split(text: str, parts: int = 3) -> list[str]:
    step = max(1, len(text) // parts)
    return [text[i : i + step] for i in range(0, len(text), step)]
