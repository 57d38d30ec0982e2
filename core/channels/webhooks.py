"""The tenant's handoff webhook (H1): every new handoff is POSTed to the URL in its settings, signed, with
retries; the outcome is written on the handoff so the inbox shows failed deliveries (and can retry them).

The body is JSON ``{"event": "handoff.created", "tenant", "handoff": {id, reason, conversation_id, created_at,
gap_id, channel, customer_id, transcript: [{at, question, status, answer, citations}]}}``.
``X-Cobertura-Signature: sha256=<hex>`` is the HMAC-SHA256 of the raw body with the tenant's secret
(Settings → Website widget), so the receiver can check the call is ours.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Sequence

import httpx

from core.base.store import Store
from core.channels import conversations, handoff
from core.tenancy import settings as tenant_settings, site_keys
from core.tenancy.context import TenantContext

log = logging.getLogger(__name__)
#: Seconds to wait before each retry (so 1 + len(RETRY_DELAYS) attempts in all).
RETRY_DELAYS = (1.0, 5.0)
TIMEOUT_SECONDS = 10.0


def signature(secret: str, body: bytes) -> str:
    """The value of ``X-Cobertura-Signature`` for a body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Notifier:
    """Delivers handoff webhooks in the background (a small thread pool), never delaying the customer's turn.

    The HTTP client, the delays and the sleep are constructor arguments so tests run without sockets or waits;
    ``background=False`` delivers in the caller's thread."""

    def __init__(self, store: Store, *, client: httpx.Client | None = None,
                 retry_delays: Sequence[float] = RETRY_DELAYS, sleep: Callable[[float], None] = time.sleep,
                 background: bool = True):
        self.store, self.retry_delays, self.sleep = store, tuple(retry_delays), sleep
        self.client = client or httpx.Client(timeout=TIMEOUT_SECONDS, follow_redirects=False)
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="webhook") if background else None

    def handoff_created(self, ctx: TenantContext, handoff_id: int) -> Future | None:
        """Queue the delivery for a new handoff when the tenant has a webhook URL."""
        if not tenant_settings.get(ctx, self.store).handoff_webhook_url:
            return None
        if self.executor is None:
            self.deliver(ctx, handoff_id)
            return None
        return self.executor.submit(self._safe_deliver, ctx, handoff_id)

    def _safe_deliver(self, ctx: TenantContext, handoff_id: int) -> str:
        try:
            return self.deliver(ctx, handoff_id)
        except Exception:  # a background failure must still leave a trace, never kill the pool silently
            log.exception("webhook delivery for handoff %s crashed", handoff_id)
            handoff.record_delivery(ctx, self.store, handoff_id, "failed", 0, "internal error while delivering")
            return "failed"

    def deliver(self, ctx: TenantContext, handoff_id: int) -> str:
        """POST the handoff to the tenant's URL, retrying on network errors and non-2xx; returns the status."""
        url = tenant_settings.get(ctx, self.store).handoff_webhook_url
        item = handoff.require(ctx, self.store, handoff_id)
        if not url:
            handoff.record_delivery(ctx, self.store, handoff_id, "none", 0, None)
            return "none"
        convo = conversations.get(ctx, self.store, item["conversation_id"])
        body = json.dumps({"event": "handoff.created", "tenant": ctx.tenant_slug, "handoff": {
            **{key: item[key] for key in ("id", "reason", "conversation_id", "created_at", "gap_id")},
            "channel": convo.channel if convo else None, "customer_id": convo.customer_id if convo else None,
            # what was said, not how the agent worked it out: traces stay inside (the private turn log has them)
            "transcript": [{key: turn.get(key) for key in ("at", "question", "status", "answer", "citations")}
                           for turn in item["transcript"]]}},
            ensure_ascii=False, default=str).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "Cobertura-Webhook/1",
                   "X-Cobertura-Event": "handoff.created", "X-Cobertura-Delivery": uuid.uuid4().hex}
        secret = site_keys.webhook_secret(ctx, self.store)
        if not secret:  # never send an unsigned call: the receiver could not tell it from a forgery
            error = ("not sent: the tenant has no signing secret yet; "
                     "an admin opens Settings → Website widget to create it")
            handoff.record_delivery(ctx, self.store, handoff_id, "failed", 0, error)
            return "failed"
        headers["X-Cobertura-Signature"] = signature(secret, body)
        error = ""
        delays = (0.0, *self.retry_delays)
        for attempt, delay in enumerate(delays, start=1):
            if delay:
                self.sleep(delay)
            try:
                response = self.client.post(url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                error = f"attempt {attempt}: could not reach {url} ({exc.__class__.__name__})"
                continue
            if 200 <= response.status_code < 300:
                handoff.record_delivery(ctx, self.store, handoff_id, "delivered", attempt, None)
                return "delivered"
            error = f"attempt {attempt}: {url} answered HTTP {response.status_code}"
        handoff.record_delivery(ctx, self.store, handoff_id, "failed", len(delays), error)
        log.warning("webhook for handoff %s failed after %d attempts: %s", handoff_id, len(delays), error)
        return "failed"

    def resume(self, ctx: TenantContext) -> int:
        """Queue again the deliveries of this tenant left ``pending`` (the process stopped while they were
        under way); returns how many. The API calls it for every tenant when it starts."""
        pending = [h["id"] for h in handoff.handoffs(ctx, self.store, None) if h["webhook_status"] == "pending"]
        for handoff_id in pending:
            if self.executor is None:
                self.deliver(ctx, handoff_id)
            else:
                self.executor.submit(self._safe_deliver, ctx, handoff_id)
        return len(pending)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
        self.client.close()
