"""The failover chain of providers and ``build_provider``, which builds it from the settings (A1).

The offline responder is not built here: ``build_provider`` returns None and the caller uses it.
"""
from __future__ import annotations

from typing import Any, Sequence

import httpx

from core.agent.protocol import Message, Provider, Reply, ToolSpec, TransportError
from core.agent.providers.anthropic import AnthropicProvider
from core.agent.providers.openai_compat import OpenAICompatibleProvider
from core.base.config import Settings, check_provider_settings


class ProviderChain:
    """Providers in order; the next is tried only when one fails in transport (safe: nothing is released
    before the gate). A ProviderError stops the chain: it needs the operator, not another provider."""

    def __init__(self, providers: Sequence[Provider]) -> None:
        if not providers:
            raise ValueError("a provider chain needs at least one provider")
        self.providers = tuple(providers)
        self.answered: Provider | None = None
        #: (provider name, error text) of each transport failure during the last call, in order
        self.attempts: list[tuple[str, str]] = []

    @property
    def name(self) -> str:
        return (self.answered or self.providers[0]).name

    @property
    def model(self) -> str:
        return (self.answered or self.providers[0]).model

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int = 1024,
        timeout: float = 60.0,
    ) -> Reply:
        self.attempts = []
        for provider in self.providers:
            try:
                reply = provider.complete(system, messages, tools, max_tokens=max_tokens, timeout=timeout)
            except TransportError as exc:
                self.attempts.append((provider.name, str(exc)))
                continue
            self.answered = provider
            return reply
        listing = "; ".join(error for _, error in self.attempts)  # each error names its provider
        raise TransportError(f"every provider failed: {listing}")

    def abort(self) -> None:
        for provider in self.providers:
            getattr(provider, "abort", lambda: None)()


def build_provider(
    settings: Settings, *, anthropic_http_client: Any = None, openai_http_client: httpx.Client | None = None
) -> ProviderChain | None:
    """A ProviderChain of the providers the settings name (one or more); None when the offline responder
    should answer. Always a chain, so the trace can read ``attempts`` whatever is configured.

    The per-call timeout is ``settings.llm_timeout``: pass it as ``timeout=`` to ``complete``.
    """
    check_provider_settings(settings)
    providers: list[Provider] = []
    for name in settings.provider_chain:
        if name == "anthropic":
            providers.append(AnthropicProvider(
                api_key=settings.anthropic_api_key,
                model=settings.anthropic_model,
                base_url=settings.anthropic_base_url or None,
                http_client=anthropic_http_client,
            ))
        elif name == "openai":
            providers.append(OpenAICompatibleProvider(
                base_url=settings.openai_base_url,
                model=settings.openai_model,
                api_key=settings.openai_key,
                http_client=openai_http_client,
            ))
    return ProviderChain(providers) if providers else None
