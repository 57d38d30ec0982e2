"""Who is asking (P1): the tenant only from the site key, the customer only from a token signed with that
tenant's secret. Nothing in a body, query or other header can name a tenant."""
from __future__ import annotations

from fastapi import Header, Request

from api.errors import ApiError
from core.tenancy.context import AuthError, TenantContext, visitor_context
from core.tenancy.site_keys import PhoneTokenError, TokenError


def client_address(request: Request) -> str:
    """The client's address for rate limits; X-Forwarded-For only when the operator trusts its proxy."""
    if request.app.state.settings.trust_proxy:
        forwarded = request.headers.get("x-forwarded-for", "")
        if forwarded.strip():
            return forwarded.split(",")[0].strip()
    return request.client.host if request.client else "unknown"


async def visitor(
    request: Request,
    x_site_key: str | None = Header(None, description="The tenant's public site key (pk_…), from the widget snippet."),
    x_customer_token: str | None = Header(
        None, description="Optional: an identified customer's token, an HS256 JWT signed by the business's backend "
        "with the tenant's secret (claims: sub = customer id, exp)."),
    x_phone_token: str | None = Header(
        None, description="Optional, for voice gateways (server to server): a phone call's token, an HS256 JWT "
        "signed with the tenant's secret (claims: sub = call or caller id, chan = \"phone\", exp). The turn runs on "
        "the phone channel, as customer phone:<sub>."),
) -> TenantContext:
    """The TenantContext of a widget request, or 401 with what to fix. Async: one indexed read, no thread hop."""
    if not x_site_key:
        raise ApiError(401, "missing_site_key", "Send the tenant's public site key in the X-Site-Key header "
                       "(the widget snippet in Settings → Website widget has it).")
    try:
        return visitor_context(request.app.state.rt.store, x_site_key.strip(), (x_customer_token or "").strip() or None,
                               phone_token=(x_phone_token or "").strip() or None, clock=request.app.state.clock)
    except PhoneTokenError as exc:
        raise ApiError(401, "invalid_phone_token", str(exc)) from None
    except TokenError as exc:
        raise ApiError(401, "invalid_customer_token", str(exc)) from None
    except AuthError as exc:
        raise ApiError(401, "invalid_site_key", str(exc)) from None
