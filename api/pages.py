"""Static parts: the widget script, the demo page, the index and a health check."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse

from api.errors import ApiError
from core.tenancy import site_keys
from core.tenancy.context import AuthError, local_operator

router = APIRouter()
WIDGET_DIR = Path(__file__).resolve().parent / "widget"


@router.get("/", summary="What this server is")
def index() -> dict:
    return {"name": "Cobertura public endpoint", "chat": "POST /v1/chat", "widget": "/widget.js", "demo": "/demo",
            "openapi": "/openapi.json"}


@router.get("/v1/health", summary="Liveness check")
def health() -> dict:
    return {"status": "ok"}


@router.get("/widget.js", summary="The embeddable widget (one static file)",
            response_class=FileResponse, responses={200: {"content": {"application/javascript": {}}}})
def widget() -> FileResponse:
    return FileResponse(WIDGET_DIR / "widget.js", media_type="application/javascript",
                        headers={"Cache-Control": "public, max-age=300"})


@router.get("/demo", summary="A demo page with the widget of the demo tenant", response_class=HTMLResponse,
            responses={404: {"description": "No demo tenant on this server", "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}})
def demo(request: Request, customer: str = "") -> HTMLResponse:
    """``?customer=demo-customer-1`` (the demo tenant's own demo customers only): the page signs that customer's token,
    as a shop's backend would, so the widget is an identified customer's and can show confirmation cards."""
    state = request.app.state
    slug = state.settings.demo_tenant
    if not slug:
        raise ApiError(404, "no_demo", "The demo page is off on this server (COBERTURA_DEMO_TENANT is empty).")
    try:
        ctx = local_operator(state.rt.store, slug, "api-demo")
    except AuthError:
        raise ApiError(404, "no_demo", f"There is no tenant '{slug}' to demo; run `python -m core init` or set "
                       "COBERTURA_DEMO_TENANT to one of your tenants.") from None
    keys = site_keys.ensure(ctx, state.rt.store)
    public = state.settings.public_url
    api = public if urlsplit(public).path.strip("/") else ""  # under a proxy's path: the widget must be told where
    page = (WIDGET_DIR / "demo.html").read_text(encoding="utf-8").replace("{{SITE_KEY}}", keys.public_key)
    page = page.replace("{{API}}", api).replace("{{CUSTOMER}}", _demo_customer(state, slug, keys.secret, customer))
    return HTMLResponse(page, headers={"Cache-Control": "no-store"})


def _demo_customer(state, slug: str, secret: str, customer: str) -> str:
    """The script tag's customer-token attribute for a demo customer ('' for an anonymous visitor)."""
    from core.demo import DEMO_CUSTOMERS, DEMO_SLUG

    if not customer:
        return ""
    if slug != DEMO_SLUG or customer not in DEMO_CUSTOMERS:
        raise ApiError(404, "no_demo_customer", "The demo page signs in only the demo tenant's own customers: "
                       + ", ".join(f"?customer={c}" for c in DEMO_CUSTOMERS) + ".")
    token = site_keys.sign_customer_token(secret, customer, 3600, clock=state.clock)
    return f' data-customer-token="{token}"'
