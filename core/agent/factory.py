"""Build the agent of a process from its settings: the configured provider chain, ending with the
offline responder so an outage of every remote provider still answers extractively (or abstains)."""
from __future__ import annotations

from core.agent.loop import Agent
from core.agent.offline import OfflineResponder
from core.agent.protocol import Provider
from core.runtime import Runtime


def make_provider(rt: Runtime) -> Provider:
    from core.agent.providers import ProviderChain, build_provider

    configured = build_provider(rt.settings)
    offline = OfflineResponder()
    if configured is None:
        return offline
    # one flat chain, so the trace lists each failed provider on its own
    return ProviderChain([*getattr(configured, "providers", [configured]), offline])


def make_agent(rt: Runtime, provider: Provider | None = None) -> Agent:
    return Agent(rt, provider or make_provider(rt), call_timeout=rt.settings.llm_timeout)
