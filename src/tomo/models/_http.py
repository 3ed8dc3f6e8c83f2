"""What every HTTP adapter shares: one client, retries with backoff, and errors that say what to fix.

Retry policy follows the official SDKs (OpenAI, Anthropic): connection errors, timeouts, 408, 409, 429 and 5xx are
retried twice with exponential backoff (0.5 s doubling, capped at 8 s) and up to 25 % jitter, and a ``Retry-After``
(or ``retry-after-ms``) of at most 60 s is honoured instead. Everything else becomes a typed error at once, because
retrying a bad key or a bad request only wastes the user's time. Streams are retried only before their first byte.

Three exceptions, all from trying tomo against real local servers: a 500 that comes back with the same message for
the same request is a template or validation error (llama-cpp-python's Jinja templates fail that way), so it is not
retried again but raised as :class:`ServerRefused`, which an adapter may adapt to; a connection refused on this
machine (127.0.0.1, localhost, ::1) means nothing listens there, which no retry mends; and a read timeout on this
machine means the server is still working on the request. A local server is one CPU or GPU that serves one request
at a time (llama-cpp-python queues the rest): resending would queue a second identical generation behind the first,
double the wait, and time out again. So a server on this machine gets a long read timeout by default
(:data:`LOCAL_TIMEOUT_S`; ``timeout_s`` under ``[providers.NAME]`` sets it) and a request that timed out reading is
not sent again: the error says so, and which setting to raise.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import random
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from tomo.errors import ModelAuthError, ModelError, ModelTimeout, ModelUnavailable
from tomo.events import Notice, NullSink, Sink

RETRY_STATUSES = frozenset({408, 409, 429})
REMOTE_TIMEOUT_S = 120.0
# A small model on a laptop CPU writes a few tokens a second and answers a non-streamed request only when it is done:
# two thousand tokens at 3-5 a second, after reading a long prompt, is several minutes.
LOCAL_TIMEOUT_S = 900.0


@dataclass(slots=True)
class RetryPolicy:
    """How often and how long to wait. ``base_s`` is configurable so tests can exercise retries without waiting."""

    max_retries: int = 2
    base_s: float = 0.5
    cap_s: float = 8.0
    retry_after_cap_s: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None and 0 <= retry_after <= self.retry_after_cap_s:
            return retry_after
        backoff = min(self.base_s * 2**retry, self.cap_s)
        return backoff * (1 - 0.25 * random.random())


def retryable(status: int) -> bool:
    return status in RETRY_STATUSES or status >= 500


# A refusal of the request itself (not of the key, the model name or the rate): an adapter may change the request.
REFUSAL_STATUSES = frozenset({400, 422, 500})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class ServerRefused(ModelError):
    """The server refused this request as it was shaped (400/422, or a 500 that repeated for the same payload).
    ``detail`` is the server's own words, which adapters read to decide what to change."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None, hint: str = "",
                 detail: str = "") -> None:
        super().__init__(message, provider=provider, status=status, hint=hint)
        self.detail = detail


class StreamBroke(ModelUnavailable):
    """The connection broke while a stream was being read (not a timeout). Never retried by ``_send`` (part of the
    reply may have been shown); an adapter that saw no chunk yet may treat it as the server refusing the request."""


def is_loopback(url: str) -> bool:
    """True when ``url`` names this machine: a refused connection there means nothing is listening."""
    host = (urllib.parse.urlsplit(url if "://" in url else f"http://{url}").hostname or "").lower()
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """``retry-after-ms`` (OpenAI), then ``Retry-After`` as seconds or as an HTTP date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (ValueError, TypeError):
            return None  # a header we cannot read is as good as none: use the backoff
        return max(0.0, parsed.timestamp() - (time.time() if now is None else now))


@dataclass(slots=True)
class Endpoint:
    """Who we are talking to, for error messages: the provider's name, its URL and the key's variable."""

    provider: str
    base_url: str
    key_env: str | None = None
    key_hint: str = ""


def provider_message(response: httpx.Response) -> str:
    """The human part of an error body, in any of the providers' shapes ({"error": {"message"}}, {"error": "..."})."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        return response.text[:300].strip()
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("type") or json.dumps(err)[:300])
        if isinstance(err, str):
            return err
    return json.dumps(body)[:300]


def error_for(response: httpx.Response, endpoint: Endpoint, model: str) -> ModelError:
    """Turns a failed response into a typed error whose hint says what to do about it."""
    status = response.status_code
    detail = provider_message(response)
    where = f"{endpoint.provider} ({endpoint.base_url})"
    if status in (401, 403):
        var = endpoint.key_env or "the API key"
        verb = "rejected the API key" if status == 401 else "refused access"
        return ModelAuthError(
            f"{where} {verb} ({status}): {detail}",
            provider=endpoint.provider,
            status=status,
            hint=f"set {var} to a valid key{endpoint.key_hint}" if endpoint.key_env else
            "check the server's API key (Ollama takes none: a proxy in front of it is asking)"
            if endpoint.provider == "ollama" else
            f"this server wants a key: name the variable that holds it with api_key_env under "
            f"[providers.{endpoint.provider}] in tomo.toml",
        )
    if status == 404:
        hint = (
            f"pull it with `ollama pull {model}`"
            if endpoint.provider == "ollama"
            else f"check the model name {model!r} and the base URL {endpoint.base_url}"
        )
        return ModelError(f"{where} does not know model {model!r} (404): {detail}", provider=endpoint.provider,
                          status=status, hint=hint)
    if status in RETRY_STATUSES or status >= 500:
        return ModelUnavailable(
            f"{where} kept failing ({status}) after retries: {detail}",
            provider=endpoint.provider,
            status=status,
            hint="wait and try again, or switch model with --model / [tiers] in tomo.toml",
        )
    lowered = detail.lower()
    if "context" in lowered and any(w in lowered for w in ("length", "window", "too long", "maximum")):
        return ModelError(
            f"{where} says the conversation is too long for {model!r} ({status}): {detail}",
            provider=endpoint.provider,
            status=status,
            hint="shorten the context (fewer files, a smaller result cap) or pick a model with a larger window",
        )
    if "max_tokens" in lowered or "max_completion_tokens" in lowered:  # e.g. Anthropic's 8192 default on a 4096 model
        return ModelError(
            f"{where} refuses the reply-length cap for {model!r} ({status}): {detail}",
            provider=endpoint.provider,
            status=status,
            hint="this model allows shorter replies: lower the loop's max_reply_tokens (e.g. 4096: under "
                 "[agents.NAME] in tomo.toml, or Limits(max_reply_tokens=...)), or pick a newer model",
        )
    return ModelError(
        f"{where} rejected the request ({status}): {detail}",
        provider=endpoint.provider,
        status=status,
        hint="this is likely a tomo bug or an option the model does not support; report it with the message above",
    )


class HttpModel:
    """Base for the HTTP adapters: owns an ``httpx.AsyncClient`` per event loop and sends with retries."""

    provider = "http"
    remote_timeout_s = REMOTE_TIMEOUT_S  # the read timeout for a server elsewhere, unless configured

    def __init__(
        self,
        model: str,
        *,
        endpoint: Endpoint,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        retry: RetryPolicy | None = None,
        sink: Sink | None = None,
    ) -> None:
        self.model = model
        self.name = f"{self.provider}:{model}"  # the spec that names this model (logs and transcripts show it)
        self.endpoint = endpoint
        self.headers = dict(headers or {})
        # On this machine: a server that works on one request at a time (see the module's docstring).
        self.local = is_loopback(endpoint.base_url)
        if timeout_s is None:
            timeout_s = LOCAL_TIMEOUT_S if self.local else self.remote_timeout_s
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.sink: Sink = sink or NullSink()
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # Set by the gateway when it read the spec as this provider's by default (``gemni:pro`` -> Ollama): every
        # error then starts by saying so, because "cannot reach ollama" alone hides the user's typo.
        self.spec_note = ""

    @property
    def client(self) -> httpx.AsyncClient:
        """A client bound to the running loop (a client cannot be shared across event loops)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(
                base_url=self.endpoint.base_url.rstrip("/"),
                headers=self.headers,
                timeout=httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s)),
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> HttpModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _notice(self, text: str, level: str = "warning") -> None:
        self.sink.emit(Notice(level=level, text=text))

    async def _wait(self, retry: int, why: str, retry_after: float | None = None) -> None:
        delay = self.retry.delay(retry, retry_after)
        self._notice(f"{self.name}: {why}; retry {retry + 1} of {self.retry.max_retries} in {delay:.2f} s", "info")
        await self.retry.sleep(delay)

    def _noted(self, error: ModelError) -> ModelError:
        """``error`` with the gateway's note on how it read the spec put first (when there is one)."""
        if self.spec_note and not error.message.startswith(self.spec_note):
            error.message = f"{self.spec_note}. {error.message}"
            error.args = (error.message,)
        return error

    def _transport_error(self, exc: httpx.TransportError, *, mid_stream: bool = False) -> ModelError:
        where = f"{self.endpoint.provider} ({self.endpoint.base_url})"
        if mid_stream:
            return (ModelTimeout if isinstance(exc, httpx.TimeoutException) else StreamBroke)(
                f"{where} stopped mid-stream ({exc.__class__.__name__}: {exc}); a stream is not retried once it "
                "has started, because part of the reply was already shown",
                provider=self.provider,
                hint="try again; if it repeats, raise timeout_s under "
                f"[providers.{self.provider}] in tomo.toml or use chat() instead of stream()",
            )
        if isinstance(exc, httpx.ReadTimeout) and self.local:
            return ModelTimeout(
                f"{where} did not answer within {self.timeout_s:g} s. A server on this machine that takes that long "
                "is most likely still generating (local servers such as llama-cpp-python work on one request at a "
                "time), so tomo did not send the request again: that would queue a second, identical generation "
                "behind the first",
                provider=self.provider,
                hint=f"raise timeout_s under [providers.{self.provider}] in tomo.toml (it is {self.timeout_s:g} s; "
                     f"the default for a server on this machine is {LOCAL_TIMEOUT_S:g} s), or use a smaller or "
                     "faster model",
            )
        if isinstance(exc, httpx.TimeoutException):
            return ModelTimeout(
                f"{where} did not answer within {self.timeout_s:g} s (after {self.retry.max_retries} retries)",
                provider=self.provider,
                hint=f"raise timeout_s under [providers.{self.provider}] in tomo.toml, or use a smaller model",
            )
        local = isinstance(exc, httpx.ConnectError) and self.local
        if self.provider == "ollama":
            hint = "start it with `ollama serve`, or point OLLAMA_HOST at it"
        elif local:
            hint = ("start the server (e.g. `python -m llama_cpp.server --model FILE --port PORT`, `llama-server`, "
                    "LM Studio's server), or fix the port in the spec; `tomo models` lists the servers it finds")
        else:
            hint = "check the network and the base URL (ANTHROPIC_BASE_URL / OPENAI_BASE_URL / [providers])"
        if local:
            return ModelUnavailable(f"nothing is listening at {where}: the connection was refused on this machine "
                                    f"({exc.__class__.__name__}), so tomo did not retry", provider=self.provider,
                                    hint=hint)
        return ModelUnavailable(f"cannot reach {where}: {exc.__class__.__name__}: {exc}", provider=self.provider,
                                hint=hint)

    async def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POSTs ``body`` and returns the decoded JSON answer, retrying what is worth retrying."""
        async with self._send(path, body, stream=False) as response:
            try:
                data = response.json()
            except ValueError as exc:
                raise ModelError(f"{self.endpoint.provider} answered with something that is not JSON: "
                                 f"{response.text[:200]!r}", provider=self.provider,
                                 hint="check that the base URL points at the provider's API") from exc
        if not isinstance(data, dict):
            raise ModelError(f"{self.endpoint.provider} answered with JSON that is not an object",
                             provider=self.provider, hint="check that the base URL points at the provider's API")
        return data

    def open_stream(self, path: str, body: dict[str, Any]) -> Any:
        """An async context manager giving a streaming response whose status was already checked."""
        return self._send(path, body, stream=True)

    @asynccontextmanager
    async def _send(self, path: str, body: dict[str, Any], *, stream: bool) -> AsyncIterator[httpx.Response]:
        client = self.client
        retry = 0
        last_500: str | None = None
        dropped = 0
        while True:
            request = client.build_request("POST", path, json=body)
            try:
                response = await client.send(request, stream=stream)
            except httpx.TransportError as exc:
                local = self.local
                refused_here = isinstance(exc, httpx.ConnectError) and local
                still_working = isinstance(exc, httpx.ReadTimeout) and local  # never queue the request twice
                if local and not isinstance(exc, httpx.ConnectError | httpx.TimeoutException):
                    dropped += 1  # a local server that hangs up on a request without answering it
                    if dropped == 2:  # ... twice for the same one: it crashes on this payload (see its log)
                        where = f"{self.endpoint.provider} ({self.endpoint.base_url})"
                        detail = ("the server dropped the connection twice for the same request "
                                  f"({exc.__class__.__name__})")
                        raise self._noted(ServerRefused(
                            f"{where}: {detail}; a local server that fails the same request twice is refusing its "
                            "shape, not having a passing fault", provider=self.endpoint.provider, detail=detail,
                            hint="the server's own log says what it could not do; switch model or server, or "
                                 "report it with the message above")) from exc
                if retry < self.retry.max_retries and not refused_here and not still_working:
                    await self._wait(retry, f"{exc.__class__.__name__}")
                    retry += 1
                    continue
                raise self._noted(self._transport_error(exc)) from exc
            if response.is_success:
                try:
                    yield response
                except httpx.TransportError as exc:  # mid-stream: never retried, the caller saw partial output
                    raise self._noted(self._transport_error(exc, mid_stream=True)) from exc
                finally:
                    await response.aclose()
                return
            if stream:
                with contextlib.suppress(httpx.TransportError):  # the status alone is enough to decide
                    await response.aread()
            await response.aclose()
            status = response.status_code
            detail = provider_message(response) if status in REFUSAL_STATUSES else ""
            repeated = status == 500 and last_500 is not None and detail == last_500
            if retryable(status) and retry < self.retry.max_retries and not repeated:
                last_500 = detail if status == 500 else None
                await self._wait(retry, f"HTTP {status}", parse_retry_after(response.headers))
                retry += 1
                continue
            error = error_for(response, self.endpoint, self.model)
            if repeated:
                where = f"{self.endpoint.provider} ({self.endpoint.base_url})"
                raise self._noted(ServerRefused(
                    f"{where} failed the same way twice for the same request ({status}): {detail}; an error that "
                    "repeats for one payload is the server refusing its shape (a template or validation error), "
                    "not a passing fault, so tomo did not retry it again",
                    provider=self.endpoint.provider, status=status, detail=detail,
                    hint="this server cannot take this request; switch model or server, or report it with the "
                         "message above"))
            if status in (400, 422):
                raise self._noted(ServerRefused(error.message, provider=error.provider, status=status,
                                                hint=error.hint, detail=detail))
            raise self._noted(error)


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    """Server-sent events as ``(event, data)``; multi-line data is joined with newlines per the SSE spec."""
    event = ""
    data: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            event = value
        elif key == "data":
            data.append(value)
    if data:
        yield event or "message", "\n".join(data)


def parse_args(raw: Any) -> tuple[dict[str, Any], str | None, str | None]:
    """Arguments as they came (a JSON string, an object or nothing) -> ``(args, malformed_reason, raw_text)``."""
    if raw is None or raw == "":
        return {}, None, None
    if isinstance(raw, dict):
        return raw, None, None
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {}, f"arguments are not valid JSON: {exc.msg} at character {exc.pos}", raw
        if isinstance(value, dict):
            return value, None, None
        return {}, f"arguments must be a JSON object, got {type(value).__name__}", raw
    return {}, f"arguments must be a JSON object, got {type(raw).__name__}", json.dumps(raw)


def make_call_id(prefix: str = "call") -> str:
    """For servers that send no id (or an empty one): unique enough to pair a result with its call."""
    return f"{prefix}_{random.getrandbits(64):016x}"
