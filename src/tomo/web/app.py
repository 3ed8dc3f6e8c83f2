"""The console's ASGI app: the ``/v1/web`` REST routes, the assistant's event stream and the page.

Every ``/v1/web`` route except ``POST /v1/web/login`` declares :func:`tomo.web.auth.require_caller` and nothing else
decides who is asking (``tests/web/test_security.py`` enumerates the routes from this app to hold that). Data is
always looked up by the caller's tenant, and a row of another tenant answers 404 like a missing one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from tomo.agents import TIERS, Agent, agent_from_settings
from tomo.config import Settings
from tomo.errors import TomoError
from tomo.loop import Limits
from tomo.models.base import Model
from tomo.store.console import ConsoleStore, LoginLimits, Tenant, email_key
from tomo.tools import Registry
from tomo.web.assistant import NOT_ON, Assistant
from tomo.web.auth import COOKIE, SAFE_METHODS, WebCaller, require_caller, same_origin, session_of
from tomo.web.jobs import JobsReader
from tomo.web.page import render_console, render_login
from tomo.web.state import ConsoleState, state_of
from tomo.web.tools import DEFAULT_TOOLS, Ambiguous, ConsoleTools, NotFound, build_registry

ASSISTANT_ENV = "ASSISTANT_PROVIDER"
STATIC = Path(__file__).resolve().parent / "static"

DEFAULT_PROMPT = (
    "You are the assistant of the tomo console. You answer questions about the user's team: its jobs (their stages, "
    "outputs and token usage), its workspaces, and the code in those workspaces. Use the tools to look things up "
    "rather than guessing; say plainly when something is not there. Keep answers short."
)


Caller = Annotated[WebCaller, Depends(require_caller)]


# ---- request and response shapes (the OpenAPI description) --------------------------------------------------------


class LoginBody(BaseModel):
    email: str = Field(..., max_length=320)
    password: str = Field(..., max_length=1000)
    tenant: str | None = Field(None, description="which of your tenants to open (default: your first)")


class TenantOut(BaseModel):
    id: int
    name: str


class UserOut(BaseModel):
    id: int
    email: str
    is_admin: bool


class AssistantStatus(BaseModel):
    enabled: bool
    reason: str = ""
    agent: str = ""
    tools: list[str] = []


class MeOut(BaseModel):
    user: UserOut
    tenant: TenantOut
    csrf_token: str
    expires_at: float
    assistant: AssistantStatus


class WorkspaceOut(BaseModel):
    id: int
    name: str
    path: str
    created_at: float


class JobsOut(BaseModel):
    jobs: list[dict[str, Any]]


class ConversationOut(BaseModel):
    id: str
    title: str
    created_at: float
    updated_at: float


class MessageOut(BaseModel):
    id: int
    role: str
    content: str
    status: str
    data: dict[str, Any]
    created_at: float


class ConversationDetail(ConversationOut):
    messages: list[MessageOut]


class NewConversation(BaseModel):
    title: str = Field("", max_length=200)


class AssistantBody(BaseModel):
    message: str = Field(..., min_length=1, max_length=20_000)
    conversation_id: str | None = Field(None, max_length=40,
                                        description="continue this conversation (default: start a new one)")


# ---- the app --------------------------------------------------------------------------------------------------------


def console_agent(settings: Settings, registry: Registry) -> Agent:
    """``[agents.console]`` from tomo.toml when it is there (checked against the console's tools), else the default."""
    configured = settings.agents.get("console")
    if configured is not None:
        return agent_from_settings("console", configured, registry, tiers=settings.tiers,
                                   defaults=Limits(max_steps=12, max_tool_calls=24))
    return Agent("console", "fast", DEFAULT_PROMPT, DEFAULT_TOOLS, limits=Limits(max_steps=12, max_tool_calls=24))


def model_factory_for(spec: str, settings: Settings) -> Callable[[], Model]:
    """A factory for ASSISTANT_PROVIDER: a tier (fast, balanced, deep) or a model spec. Checked once now, so a missing
    key or script is an error at start-up, not in the first conversation."""
    from tomo.models.gateway import model_for_tier, model_from_spec

    spec = spec.strip()
    if spec in TIERS:
        model_for_tier(spec, settings)
        return lambda: model_for_tier(spec, settings)
    model_from_spec(spec, settings)
    return lambda: model_from_spec(spec, settings)


def create_app(
    store: ConsoleStore,
    *,
    settings: Settings | None = None,
    assistant_provider: str | None = None,
    model_factory: Callable[[], Model] | None = None,
    extra_tools: Sequence[Callable[..., Any]] = (),
    session_ttl_s: float = 8 * 3600,
    login_limits: LoginLimits | None = None,
    secure_cookies: bool | None = None,
) -> FastAPI:
    """The console for ``store``. The assistant uses ``model_factory`` if given, else ``assistant_provider`` (default:
    the ASSISTANT_PROVIDER variable); with neither it is switched off and says so."""
    store.require_ready()
    settings = settings or Settings()
    tools = ConsoleTools(store, JobsReader())
    registry = build_registry(tools)
    for fn in extra_tools:
        registry.register(fn)
    agent = console_agent(settings, registry)
    if model_factory is None:
        spec = assistant_provider if assistant_provider is not None else os.environ.get(ASSISTANT_ENV, "")
        if spec.strip():
            model_factory = model_factory_for(spec, settings)
    assistant = Assistant(store, agent, registry, model_factory, NOT_ON)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        await assistant.shutdown()
        tools.jobs.close()

    app = FastAPI(title="tomo console", version="1", lifespan=lifespan,
                  description="A multi-tenant console for tomo: jobs, workspaces and an assistant that reads them "
                              "as the logged-in user. Every /v1/web route but login needs the session cookie; "
                              "state-changing ones also need X-CSRF-Token (from GET /v1/web/me).")
    app.state.console = ConsoleState(store, tools, assistant, session_ttl_s, login_limits or LoginLimits(),
                                     secure_cookies)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    app.add_middleware(SecurityHeaders)

    _routes(app)
    _page_routes(app)
    return app


class SecurityHeaders:
    """Adds the headers every answer carries. Plain ASGI (not ``@app.middleware``), so a streamed reply passes
    through untouched instead of being re-queued chunk by chunk."""

    EVERY = ((b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"),
             (b"x-frame-options", b"DENY"))

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith("/v1/web")

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                extra = [*self.EVERY, (b"cache-control", b"no-store")] if api else list(self.EVERY)
                headers += [(k, v) for k, v in extra if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def _routes(app: FastAPI) -> None:
    @app.post("/v1/web/login", tags=["session"], summary="Log in (JSON or form); sets the session cookie",
              openapi_extra={"requestBody": {"content": {
                  "application/json": {"schema": LoginBody.model_json_schema()},
                  "application/x-www-form-urlencoded": {"schema": LoginBody.model_json_schema()}},
                  "required": True}},
              responses={401: {"description": "wrong email or password"}, 429: {"description": "too many failures"}})
    async def login(request: Request) -> Response:
        state = state_of(request)
        form = not request.headers.get("content-type", "").startswith("application/json")
        if not same_origin(request):
            raise HTTPException(403, "a login must come from this console's own page")
        body = await _login_body(request, form)
        address = request.client.host if request.client else "unknown"
        keys = (email_key(body.email), f"address:{address}")
        limits = state.login_limits
        for key, allowed in zip(keys, (limits.per_email, limits.per_address), strict=True):
            count, oldest = await asyncio.to_thread(state.store.recent_failures, key, limits.window_s)
            if count >= allowed:
                wait = max(1, int(oldest + limits.window_s - time.time()))
                raise HTTPException(429, f"too many failed logins; try again in {wait} seconds",
                                    headers={"Retry-After": str(wait)})
        user = await asyncio.to_thread(state.store.check_password, body.email, body.password)
        if user is None:
            await asyncio.to_thread(state.store.record_failure, *keys)
            if form:
                return render_login("Wrong email or password.", status=401)
            raise HTTPException(401, "wrong email or password")
        tenant = _pick_tenant(user.tenants, body.tenant)
        old = request.cookies.get(COOKIE)
        if old:  # rotation: whatever session this browser had ends here
            await asyncio.to_thread(state.store.delete_session, old)
        token, session = await asyncio.to_thread(state.store.create_session, user, tenant, state.session_ttl_s)
        await asyncio.to_thread(state.store.clear_failures, keys[0])
        response: Response
        if form:
            response = RedirectResponse("/", status_code=303)
        else:
            response = JSONResponse({"user": {"id": user.id, "email": user.email, "is_admin": user.is_admin},
                                     "tenant": {"id": tenant.id, "name": tenant.name},
                                     "csrf_token": session.csrf_token})
        secure = state.secure_cookies if state.secure_cookies is not None else request.url.scheme == "https"
        response.set_cookie(COOKIE, token, max_age=int(state.session_ttl_s), path="/", httponly=True,
                            samesite="lax", secure=secure)
        return response

    @app.post("/v1/web/logout", tags=["session"], summary="End the session", status_code=204)
    def logout(caller: Caller, request: Request) -> Response:
        state_of(request).store.delete_session(caller.token)
        response = Response(status_code=204)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/v1/web/me", tags=["session"], response_model=MeOut,
             summary="Who you are, your tenant, and the CSRF token state-changing requests send back")
    def me(caller: Caller, request: Request) -> MeOut:
        session = caller.session
        assistant = state_of(request).assistant
        return MeOut(user=UserOut(id=session.user.id, email=session.user.email, is_admin=session.user.is_admin),
                     tenant=TenantOut(id=session.tenant.id, name=session.tenant.name),
                     csrf_token=session.csrf_token, expires_at=session.expires_at,
                     assistant=AssistantStatus(enabled=assistant.enabled,
                                               reason="" if assistant.enabled else assistant.disabled_reason,
                                               agent=assistant.agent.name, tools=list(assistant.agent.tools)))

    @app.get("/v1/web/jobs", tags=["jobs"], response_model=JobsOut, summary="Your tenant's jobs, newest first")
    def list_jobs(caller: Caller, request: Request, status: str | None = None,
                  workspace: str | None = None) -> JobsOut:
        return JobsOut(jobs=_found(lambda: state_of(request).tools.list_jobs(caller.caller, status, workspace)))

    @app.get("/v1/web/jobs/{job_id}", tags=["jobs"], summary="One job: stages, worker outputs, usage",
             responses={404: {"description": "no such job in your tenant (or in that workspace)"},
                        409: {"description": "two of your workspaces have a job with this id: name the workspace"}})
    def show_job(caller: Caller, request: Request, job_id: str,
                 workspace: Annotated[str | None, Query(description="the job's workspace (name or id)")] = None,
                 ) -> dict[str, Any]:
        return _found(lambda: state_of(request).tools.show_job(caller.caller, job_id, workspace))

    @app.get("/v1/web/workspaces", tags=["workspaces"], response_model=list[WorkspaceOut],
             summary="The repositories registered to your tenant")
    def list_workspaces(caller: Caller, request: Request) -> list[dict[str, Any]]:
        return state_of(request).tools.list_workspaces(caller.caller)

    @app.get("/v1/web/workspaces/{workspace_id}", tags=["workspaces"], response_model=WorkspaceOut,
             responses={404: {"description": "no such workspace in your tenant"}})
    def show_workspace(caller: Caller, request: Request, workspace_id: int) -> dict[str, Any]:
        for ws in state_of(request).store.workspaces(caller.tenant_id):
            if ws.id == workspace_id:
                return ws.to_dict()
        raise HTTPException(404, f"there is no workspace {workspace_id} in your tenant")

    @app.get("/v1/web/workspaces/{workspace_id}/symbols", tags=["workspaces"],
             summary="Find definitions by name in a workspace (prism)",
             responses={404: {"description": "no such workspace in your tenant"}})
    def find_symbol(caller: Caller, request: Request, workspace_id: int,
                    q: Annotated[str, Query(min_length=1, max_length=200)]) -> list[dict[str, Any]]:
        return _found(lambda: state_of(request).tools.find_symbol(caller.caller, str(workspace_id), q))

    @app.post("/v1/web/conversations", tags=["conversations"], response_model=ConversationOut, status_code=201,
              summary="Start a new, empty conversation")
    def new_conversation(caller: Caller, request: Request, body: NewConversation | None = None) -> dict[str, Any]:
        conv = state_of(request).store.create_conversation(caller.tenant_id, caller.user_id,
                                                           body.title if body else "")
        return conv.to_dict()

    @app.get("/v1/web/conversations", tags=["conversations"], response_model=list[ConversationOut],
             summary="Your conversations, most recent first")
    def list_conversations(caller: Caller, request: Request) -> list[dict[str, Any]]:
        return [c.to_dict() for c in state_of(request).store.conversations(caller.tenant_id, caller.user_id)]

    @app.get("/v1/web/conversations/{conversation_id}", tags=["conversations"], response_model=ConversationDetail,
             responses={404: {"description": "no such conversation of yours"}})
    def show_conversation(caller: Caller, request: Request, conversation_id: str) -> dict[str, Any]:
        store = state_of(request).store
        conv = store.conversation(caller.tenant_id, caller.user_id, conversation_id)
        if conv is None:
            raise HTTPException(404, f"there is no conversation {conversation_id!r} of yours")
        return {**conv.to_dict(), "messages": [m.to_dict() for m in store.messages(conv.id)]}

    @app.post("/v1/web/assistant", tags=["assistant"],
              summary="Ask the assistant; the answer streams as server-sent events",
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "events: conversation, text, tool, refused, capped, truncated, limit, "
                                              "notice, usage, answer, error, done"},
                         404: {"description": "no such conversation of yours"},
                         503: {"description": "the assistant is not switched on here"}})
    async def ask(caller: Caller, request: Request, body: AssistantBody) -> StreamingResponse:
        state = state_of(request)
        if not state.assistant.enabled:
            raise HTTPException(503, state.assistant.disabled_reason)
        store = state.store
        if body.conversation_id:
            conv = await asyncio.to_thread(store.conversation, caller.tenant_id, caller.user_id,
                                           body.conversation_id)
            if conv is None:
                raise HTTPException(404, f"there is no conversation {body.conversation_id!r} of yours")
        else:
            conv = await asyncio.to_thread(store.create_conversation, caller.tenant_id, caller.user_id)
        frames = state.assistant.start(caller.caller, conv, body.message)
        return StreamingResponse(frames, media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


def _page_routes(app: FastAPI) -> None:
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page(request: Request, c: str | None = None) -> Response:
        found = session_of(request)
        if found is None:
            return render_login()
        session, _token = found
        state = state_of(request)
        caller = WebCaller(session, _token)
        return render_console(state, caller, c)

    @app.get("/healthz", include_in_schema=False)
    def health() -> dict[str, str]:
        return {"status": "ok"}


def _found(fetch: Callable[[], Any]) -> Any:
    try:
        return fetch()
    except NotFound as exc:
        raise HTTPException(404, exc.message) from exc
    except Ambiguous as exc:
        raise HTTPException(409, exc.message + (f" ({exc.hint})" if exc.hint else "")) from exc
    except TomoError as exc:
        raise HTTPException(400, exc.message + (f" ({exc.hint})" if exc.hint else "")) from exc


async def _login_body(request: Request, form: bool) -> LoginBody:
    try:
        if form:
            data: Any = dict(await request.form())
        else:
            data = await request.json()
        return LoginBody.model_validate(data)
    except Exception as exc:
        raise HTTPException(422, "send email and password, as JSON or as a form") from exc


def _pick_tenant(tenants: Sequence[Tenant], wanted: str | None) -> Tenant:
    if not tenants:
        raise HTTPException(403, "this user belongs to no tenant: add one with `tomo users add EMAIL --tenant NAME`")
    if wanted:
        for tenant in tenants:
            if tenant.name == wanted:
                return tenant
        raise HTTPException(403, f"you are not a member of tenant {wanted!r}")
    return tenants[0]


__all__ = ["SAFE_METHODS", "LoginLimits", "create_app"]
