"""Settings → Website widget: the snippet with the tenant's public site key, the signing secret for
identified customers and webhooks (hidden until revealed; both rotatable after a confirmation), and the
handoff webhook URL."""
from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import urlsplit

import streamlit as st

from core.channels import webhooks
from core.runtime import Runtime
from core.tenancy import settings as tenant_settings, site_keys
from core.tenancy.context import TenantContext
from core.tenancy.settings import TenantSettings
from pages.settings_state import attempt, fill, k, saved, update


def when(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (TypeError, ValueError):
        return str(iso)


def endpoint_base(process) -> str:
    """The public endpoint's address: COBERTURA_PUBLIC_URL, else as COBERTURA_API_HOST/PORT give it."""
    if process.public_url:
        return process.public_url
    if process.api_host in ("0.0.0.0", "::", ""):
        # listening everywhere: only the admin knows the name customers reach it by
        return f"http://YOUR-SERVER:{process.api_port}"
    return process.endpoint_url


def script_tag(base: str, site_key: str, extra: str = "") -> str:
    """The widget's tag. An endpoint under a path (a proxy's /chat) is named in data-api: the widget otherwise
    talks to the origin its script came from."""
    api = f' data-api="{base}"' if urlsplit(base).path.strip("/") else ""
    return f'<script src="{base}/widget.js" data-site-key="{site_key}"{api}{extra} defer></script>'


def confirmed(name: str, ask: str, warning: str, yes: str) -> bool:
    """A button that asks first: True once the admin has confirmed (the kill switch's pattern)."""
    if not st.session_state.get(k(f"{name}_confirm")):
        if st.button(ask, key=f"{name}_ask", icon=":material/autorenew:"):
            st.session_state[k(f"{name}_confirm")] = True
            st.rerun()
        return False
    st.warning(warning)
    left, right, _ = st.columns([1, 1, 2])
    if right.button("Cancel", key=f"{name}_cancel", width="stretch"):
        st.session_state.pop(k(f"{name}_confirm"), None)
        st.rerun()
    if left.button(yes, key=name, type="primary", width="stretch"):
        st.session_state.pop(k(f"{name}_confirm"), None)
        return True
    return False


def website_widget(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    keys = site_keys.ensure(ctx, rt.store)
    base = endpoint_base(rt.settings)
    site_key_section(rt, ctx, keys, base)
    st.divider()
    signing_secret_section(rt, ctx, keys)
    identified_customers_help(keys, base)
    st.divider()
    handoff_webhook_section(rt, ctx, current)
    webhook_receiver_help()


def site_key_section(rt: Runtime, ctx: TenantContext, keys, base: str) -> None:
    """The snippet with the public site key, where it points, and rotating the key."""
    snippet = script_tag(base, keys.public_key)
    st.markdown("**Put the chat on your website**")
    st.caption("Paste this tag before `</body>` on every page that should show the chat. The site key is public: it "
               "only says which tenant the visitors talk to.")
    st.code(snippet, language="html", wrap_lines=True)
    notes = [f"Site key in use since {when(keys.key_rotated_at)}."]
    if rt.settings.public_url:
        notes.append(f"The address is the endpoint's public URL, {base} (COBERTURA_PUBLIC_URL).")
    elif base.startswith("http://YOUR-SERVER"):
        notes.append("The endpoint listens on every address (COBERTURA_API_HOST): replace YOUR-SERVER with the name "
                     "your customers reach it by, or set COBERTURA_PUBLIC_URL to it.")
    else:
        notes.append(f"The address is the public endpoint's (`python -m api`, COBERTURA_API_HOST/PORT: {base}); behind "
                     "a proxy or HTTPS, set COBERTURA_PUBLIC_URL to the address your customers reach.")
    st.caption(" ".join(notes))
    if confirmed("rotate_key", "Rotate site key…",
                 "**Rotate the site key?** The snippet on your site stops working at once: the chat there fails "
                 "until you paste the new snippet. Rotate when the key is used somewhere it should not be.",
                 "Yes, rotate the site key"):
        if attempt(site_keys.rotate_public_key, ctx, rt.store):
            saved("New site key made; the old one no longer works. Paste the new snippet on your site.")


def signing_secret_section(rt: Runtime, ctx: TenantContext, keys) -> None:
    """The signing secret (hidden until revealed), when it last changed, and rotating it."""
    st.markdown("**Signing secret**")
    st.caption("Your backend signs identified customers with it, and it signs our calls to your webhook. Keep it on "
               "your server only: never in a web page or in the browser.")
    if st.toggle("Reveal secret", key=k("reveal_secret")):
        st.code(keys.secret, language=None)
    else:
        st.code(site_keys.SECRET_PREFIX + "•" * 24, language=None)
    st.caption(f"In use since {when(keys.secret_rotated_at)}; the last change to the key or the secret was made by "
               f"{keys.rotated_by}.")
    if confirmed("rotate_secret", "Rotate secret…",
                 "**Rotate the secret?** Every customer token signed with the old secret is refused from now on, and "
                 "webhook calls are signed with the new one: update your backend and your webhook receiver with the "
                 "new secret right after.",
                 "Yes, rotate the secret"):
        if attempt(site_keys.rotate_secret, ctx, rt.store):
            saved("New secret made; tokens signed with the old one are refused. "
                  "Update your backend and webhook receiver.")


def identified_customers_help(keys, base: str) -> None:
    """How a backend signs a customer token, with the tag and a Python example."""
    with st.expander("Identified customers: sign a token on your backend"):
        st.markdown(
            "For a signed-in customer, add `data-customer-token` to the tag. The token is a standard **HS256 JWT** "
            "signed with the secret above, with `sub` = your customer id and `exp` = its expiry (seconds since 1970, "
            f"at most {site_keys.MAX_TOKEN_LIFETIME // 86400} days ahead). The agent then answers on the `identified` "
            "channel, and a conversation it cannot resolve is handed to your team (the Inbox).")
        st.code(script_tag(base, keys.public_key, '\n        data-customer-token="TOKEN_FROM_YOUR_BACKEND"'),
                language="html", wrap_lines=True)
        st.code('import os, time\n'
                'import jwt  # pip install PyJWT\n\n'
                'SECRET = os.environ["COBERTURA_SECRET"]  # the signing secret above, kept out of your code\n\n'
                'def customer_token(customer_id: str) -> str:\n'
                '    """A token for one signed-in customer, valid for an hour."""\n'
                '    return jwt.encode({"sub": customer_id, "exp": int(time.time()) + 3600}, SECRET, '
                'algorithm="HS256")\n',
                language="python")


def handoff_webhook_section(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    """The handoff webhook URL form."""
    st.markdown("**Handoff webhook**")
    st.caption("When the agent hands a conversation to a person, we POST it to this URL (as well as listing it in the "
               "Inbox): a helpdesk, a Slack or Zapier hook, your own endpoint. Empty = the Inbox only.")
    fill("webhook_url", current.handoff_webhook_url)
    with st.form("settings_webhook"):
        st.text_input("Webhook URL", key=k("webhook_url"), max_chars=tenant_settings.MAX_URL,
                      placeholder="https://example.com/hooks/cobertura")
        submitted = st.form_submit_button("Save", key="save_webhook", type="primary")
    if submitted and update(rt, ctx, handoff_webhook_url=st.session_state[k("webhook_url")]):
        url = st.session_state[k("webhook_url")].strip()
        saved(f"Handoff webhook saved: new handoffs are sent to {url}." if url else
              "Handoff webhook removed: handoffs are listed in the Inbox only.")


def webhook_receiver_help() -> None:
    """What a webhook call carries, and how the receiver checks its signature."""
    attempts = 1 + len(webhooks.RETRY_DELAYS)
    with st.expander("What the webhook receives and how to check it is us"):
        st.markdown(
            "A JSON body `{\"event\": \"handoff.created\", \"tenant\": …, \"handoff\": {id, reason, conversation_id, "
            "created_at, gap_id, transcript}}` with the headers `X-Cobertura-Event`, `X-Cobertura-Delivery` (a unique "
            "id per call) and **`X-Cobertura-Signature: sha256=<hex>`**: the HMAC-SHA256 of the raw body with the "
            f"secret above. Answer with any 2xx status within {webhooks.TIMEOUT_SECONDS:.0f} s; otherwise we try "
            f"{attempts} times in all, then the Inbox marks the handoff's delivery as failed (with a button to retry).")
        st.code('import hashlib, hmac, os\n\n'
                'SECRET = os.environ["COBERTURA_SECRET"]\n\n'
                'def is_from_cobertura(raw_body: bytes, signature_header: str) -> bool:\n'
                '    """Check X-Cobertura-Signature against the raw request body (before parsing the JSON)."""\n'
                '    expected = "sha256=" + hmac.new(SECRET.encode(), raw_body, hashlib.sha256).hexdigest()\n'
                '    return hmac.compare_digest(expected, signature_header or "")\n',
                language="python")
