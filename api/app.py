"""The public endpoint (P1-P4) assembled from its parts: ``create_app(settings)``."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Callable

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from api import admin, booking, cards, chat, demo_shop, errors, feedback, outbox_rounds, pages
from api.limits import BodyLimit
from api.ratelimit import RateLimiter
from core.agent.factory import make_agent
from core.agent.loop import Agent
from core.agent.protocol import Provider
from core.base.config import Settings, load_settings
from core.runtime import Runtime, open_runtime
from core.tenancy.context import TenantContext, local_operator
from core.tenancy.tenants import list_tenants


def create_app(settings: Settings | None = None, *, runtime: Runtime | None = None,
               provider: Callable[[], Provider] | None = None, clock: Callable[[], float] = time.time,
               monotonic: Callable[[], float] = time.monotonic, outbox_every: float = 60.0) -> FastAPI:
    """The ASGI app. ``runtime`` shares an open runtime (tests; otherwise one is opened on start, with the demo
    tenant on an empty data dir); ``provider`` builds the provider of each turn (tests and the load benchmark;
    otherwise the tenant's configured chain); ``clock`` is the wall clock customer tokens are checked against;
    ``outbox_every``: seconds between the outbox's delivery rounds for every tenant (0: none)."""
    settings = settings or (runtime.settings if runtime else load_settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        owned = app.state.rt is None
        if owned:
            app.state.rt = open_runtime(settings)
            if not list_tenants(app.state.rt.store):
                from core.demo import init_demo

                init_demo(app.state.rt)
        for tenant in list_tenants(app.state.rt.store):  # webhook calls a previous run left under way
            app.state.rt.notifier.resume(local_operator(app.state.rt.store, tenant["slug"], "api"))
        app.state.executor = ThreadPoolExecutor(max_workers=settings.api_workers, thread_name_prefix="turn")
        rounds = outbox_rounds.start(app, outbox_every)  # confirmation e-mails retried on time
        try:
            yield
        finally:
            if rounds is not None:
                rounds.cancel()
            app.state.executor.shutdown(wait=False, cancel_futures=True)
            if owned:
                app.state.rt.close()
                app.state.rt = None

    app = FastAPI(title="Cobertura public endpoint", version="1",
                  description="The chat endpoint the widget talks to (server-sent events), the widget itself, and the "
                  "operator's private logs. The tenant comes only from the site key (X-Site-Key), an identified "
                  "customer only from a token signed with the tenant's secret (X-Customer-Token).",
                  lifespan=lifespan, docs_url=None, redoc_url=None)  # their pages load from a CDN: not offline
    app.state.settings, app.state.rt, app.state.clock = settings, runtime, clock
    app.state.key_limiter = RateLimiter(settings.rate_per_key, monotonic)
    app.state.ip_limiter = RateLimiter(settings.rate_per_ip, monotonic)

    def agent_for(ctx: TenantContext) -> Agent:
        return make_agent(app.state.rt, provider() if provider else None, ctx=ctx)

    app.state.agent_for = agent_for
    errors.install(app)
    for part in (chat, feedback, cards, booking, admin, pages, demo_shop):
        app.include_router(part.router)
    app.add_middleware(BodyLimit)
    # the widget runs on the business's own site: any origin may call, without cookies (keys travel in headers).
    # Added last, so it is the outermost layer: its headers reach every answer, the body cap's 413 included
    # (X-Phone-Token is not among the allowed headers: a voice gateway calls server to server, never from a page)
    app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
                       allow_headers=["Content-Type", "X-Site-Key", "X-Customer-Token", "Authorization"],
                       expose_headers=["Retry-After"], max_age=600)
    return app
