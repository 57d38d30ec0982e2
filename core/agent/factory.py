"""Build the agent of a process from its settings: the configured provider chain, ending with the
offline responder so an outage of every remote provider still answers extractively (or abstains).

With a tenant (``make_agent(rt, ctx=ctx)``) the tenant's settings (S2) apply: its name and its
instructions and guardrails in the system prompt (below the built-in rules), and the provider and model
it chose among those the environment configures (keys stay in the environment). The kill switch and
the enabled channels are checked by the turn pipeline (``core.channels.turn``) on every turn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from core.agent import prompts
from core.agent.loop import Agent
from core.agent.protocol import Message, Provider, Reply, ToolSpec
from core.agent.providers.offline import OfflineResponder
from core.tenancy import settings as tenant_settings
from core.tenancy.context import AuthError, TenantContext

if TYPE_CHECKING:
    from core.runtime import Runtime


def make_provider(rt: Runtime, provider: str = "", model: str = "") -> Provider:
    """The process's provider chain, or (``provider`` given) that one provider with ``model`` ("" = its
    default from the environment); either way ending with the offline responder."""
    from core.agent.providers.chain import ProviderChain, build_provider

    configured = build_provider(tenant_settings.provider_settings(rt.settings, provider, model))
    offline = OfflineResponder()
    if configured is None:
        return offline
    # one flat chain, so the trace lists each failed provider on its own
    return ProviderChain([*getattr(configured, "providers", [configured]), offline])


class TenantPrompt:
    """A provider that receives the tenant's instructions and guardrails after the built-in rules.

    ``Agent.answer`` builds the system prompt with the built-in rules only; appending the tenant's part here
    gives exactly ``prompts.system_prompt(name, language, instructions, guardrails)``."""

    def __init__(self, inner: Provider, rules: str) -> None:
        self.inner, self.rules = inner, rules

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def attempts(self) -> list:
        return getattr(self.inner, "attempts", [])

    def abort(self) -> None:
        getattr(self.inner, "abort", lambda: None)()

    def complete(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], *,
                 max_tokens: int = 1024, timeout: float = 60.0) -> Reply:
        return self.inner.complete(f"{system}\n\n{self.rules}", messages, tools, max_tokens=max_tokens, timeout=timeout)


class TenantAgent(Agent):
    """An agent bound to one tenant's settings; asking it for another tenant is refused."""

    tenant_id: int

    def answer(self, ctx: TenantContext, *args, **kwargs):
        if ctx.tenant_id != self.tenant_id:
            raise AuthError("This agent was built for another tenant; build one with make_agent(rt, ctx=ctx).")
        return super().answer(ctx, *args, **kwargs)


def make_agent(rt: Runtime, provider: Provider | None = None, *, ctx: TenantContext | None = None) -> Agent:
    """The process's agent; with ``ctx``, the agent of that tenant under its settings (build one per
    request or per tenant: settings are read when it is built, the kill switch on every turn)."""
    if ctx is None:
        return Agent(rt, provider or make_provider(rt), call_timeout=rt.settings.llm_timeout)
    settings = tenant_settings.get(ctx, rt.store)
    chosen = provider or make_provider(rt, settings.provider, settings.model)
    rules = prompts.tenant_rules(settings.instructions, settings.guardrails)
    actions = getattr(rt, "actions", None)  # the tenant's operations, registered as tools like any other (A2)
    booking = getattr(rt, "booking", None)  # its booking tools (check_availability, create_booking), likewise
    extra = [*(actions.tools(ctx) if actions else ()), *(booking.tools(ctx) if booking else ())]
    agent = TenantAgent(rt, TenantPrompt(chosen, rules) if rules else chosen, tenant_name=settings.name,
                        call_timeout=rt.settings.llm_timeout, extra_tools=extra)
    agent.tenant_id = ctx.tenant_id
    return agent
