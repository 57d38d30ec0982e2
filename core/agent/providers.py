"""LLM providers behind one interface (A1): Anthropic, any OpenAI-compatible endpoint, a failover chain.

Each provider translates the neutral records of ``core.agent.protocol`` to its wire format and back, and
sorts failures in two kinds: ``TransportError`` (unreachable, timed out, overloaded, failing on its
side: the chain may try the next provider) and ``ProviderError`` (a configuration the operator must fix:
a rejected key, an unknown model; trying elsewhere would hide it). The offline responder is not here:
``build_provider`` returns None and the caller uses it.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import httpx

from core.agent.protocol import Message, Provider, Reply, ToolCall, ToolSpec, TransportError, Usage
from core.config import ConfigError, Settings, check_provider_settings

ANTHROPIC_API_URL = "https://api.anthropic.com"
# 408 and 409 are transient on these APIs (request timeout, concurrent-change conflict); 429 is a rate limit
_TRANSIENT_STATUS = frozenset({408, 409, 429})


class ProviderError(RuntimeError):
    """The provider refused the request for a reason the operator must fix (key, model, endpoint)."""


def _is_transient(status: int) -> bool:
    return status in _TRANSIENT_STATUS or status >= 500


def _redact(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _advice(status: int, key_variable: str, model_variable: str, url_variable: str) -> str:
    """What the operator should check for a 4xx that retrying or failing over will not cure."""
    if status == 401:
        return f"{key_variable} was rejected (401): check the key"
    if status == 403:
        return f"{key_variable} is not allowed to do this (403): check the key's permissions and the model's access"
    if status == 404:
        return f"model or endpoint not found (404): check {model_variable} and {url_variable}"
    if status == 413:
        return "the request is too large (413): shorten the conversation or the tool results"
    return f"the request was rejected ({status}): check {model_variable} and {url_variable}"


def _stop_reason(reason: str | None, has_tool_calls: bool) -> str:
    if reason in ("max_tokens", "length", "model_context_window_exceeded"):
        return "max_tokens"  # a cut-off must be declared, whatever the provider calls it
    if has_tool_calls or reason in ("tool_use", "tool_calls", "function_call"):
        return "tool_use"
    return "end"


# --------------------------------------------------------------------------------------------- Anthropic


def anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages as Messages-API turns: tool results become user turns of ``tool_result`` blocks."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
                "is_error": message.is_error,
            }
            previous = turns[-1] if turns else None
            # consecutive results answer one assistant turn: they must arrive together in one user turn
            if previous and previous["role"] == "user" and isinstance(previous["content"], list) and all(
                b.get("type") == "tool_result" for b in previous["content"]
            ):
                previous["content"].append(block)
            else:
                turns.append({"role": "user", "content": [block]})
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks += [
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
                for call in message.tool_calls
            ]
            if blocks:  # the API rejects an empty assistant turn
                turns.append({"role": "assistant", "content": blocks})
        elif message.role == "user":
            turns.append({"role": "user", "content": message.content})
        else:
            raise ValueError(f"unknown message role {message.role!r}; use user, assistant or tool")
    return turns


class AnthropicProvider:
    """Claude through the official ``anthropic`` SDK (Messages API, tool use, no streaming)."""

    name = "anthropic"

    def __init__(
        self, api_key: str, model: str, base_url: str | None = None, http_client: Any = None, max_retries: int = 0
    ) -> None:
        """``http_client`` must be an ``httpx2.Client`` (the SDK is built on httpx2, not httpx)."""
        import anthropic  # here, not at the top: importing the SDK takes ~2.5 s that offline use never needs

        if not api_key:
            raise ConfigError("ANTHROPIC_API_KEY is not set; set it to your API key.")
        self.model = model
        self._api_key = api_key
        self._base_url = base_url or ANTHROPIC_API_URL
        self._sdk = anthropic
        # base_url is always explicit so ANTHROPIC_BASE_URL in the environment cannot redirect us behind
        # core/config.py's back; our own trace records the calls, so the SDK's OpenTelemetry spans are off
        self._client = anthropic.Anthropic(
            api_key=api_key, base_url=self._base_url, http_client=http_client, max_retries=max_retries,
            open_telemetry=False,
        )

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int = 1024,
        timeout: float = 60.0,
    ) -> Reply:
        kwargs: dict[str, Any] = {}
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
        try:
            response = self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=anthropic_messages(messages),  # type: ignore[arg-type]
                timeout=timeout,
                **kwargs,
            )
        except self._sdk.APIError as exc:
            raise self._translate_error(exc, timeout) from None
        try:
            return self._reply(response)
        except (AttributeError, TypeError, ValueError) as exc:
            raise TransportError(
                f"anthropic ({self.model}) answered something that is not a Messages API reply: {_short(repr(exc))}"
            ) from None

    def abort(self) -> None:
        """Drop the request in flight (the client went away): its connection is closed."""
        self._client.close()

    def _reply(self, response: Any) -> Reply:
        text = "".join(block.text for block in response.content if block.type == "text")
        calls = tuple(
            ToolCall(id=block.id, name=block.name, arguments=dict(block.input or {}))
            for block in response.content
            if block.type == "tool_use"
        )
        usage = response.usage
        # cached prompt tokens are billed input too: the trace counts them all
        input_tokens = (
            usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
        )
        return Reply(
            text=text,
            tool_calls=calls,
            provider=self.name,
            model=response.model or self.model,
            usage=Usage(input_tokens=input_tokens, output_tokens=usage.output_tokens),
            stop_reason=_stop_reason(response.stop_reason, bool(calls)),
        )

    def _translate_error(self, exc: Exception, timeout: float) -> Exception:
        sdk = self._sdk
        where = f"anthropic ({self.model})"
        if isinstance(exc, sdk.APITimeoutError):
            return TransportError(f"{where} timed out after {timeout:g}s")
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc
            detail = _short(_redact(f"{type(cause).__name__}: {cause}", self._api_key))
            return TransportError(f"{where} could not be reached at {self._base_url}: {detail}")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            body = exc.api_message or (exc.body if exc.body is not None else exc.response.text)
            detail = _short(_redact(str(body), self._api_key))
            if _is_transient(status):
                return TransportError(f"{where} failed on its side ({status}): {detail}")
            advice = _advice(status, "ANTHROPIC_API_KEY", "COBERTURA_ANTHROPIC_MODEL", "COBERTURA_ANTHROPIC_BASE_URL")
            return ProviderError(f"{where}: {advice}. The API said: {detail}")
        return TransportError(f"{where} failed: {_short(_redact(str(exc), self._api_key))}")


# ----------------------------------------------------------------------------------- OpenAI-compatible


def openai_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages in the chat-completions format: system first, tool results as ``tool`` messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
        elif message.role == "assistant":
            # content may be null only beside tool calls
            entry: dict[str, Any] = {
                "role": "assistant",
                "content": message.content if message.content or not message.tool_calls else None,
            }
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        elif message.role == "user":
            out.append({"role": "user", "content": message.content})
        else:
            raise ValueError(f"unknown message role {message.role!r}; use user, assistant or tool")
    return out


def parse_arguments(raw: Any) -> dict:
    """Tool-call arguments arrive as a JSON string; a model may send broken JSON: keep it as ``_raw``."""
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {"_raw": str(raw)}
    return value if isinstance(value, dict) else {"_raw": str(raw)}


class OpenAICompatibleProvider:
    """Any ``/chat/completions`` endpoint with function calling: Ollama, vLLM, LiteLLM, OpenAI itself."""

    name = "openai"

    def __init__(
        self, base_url: str, model: str, api_key: str = "", http_client: httpx.Client | None = None
    ) -> None:
        if not base_url:
            raise ConfigError("COBERTURA_OPENAI_BASE_URL is not set; set it, e.g. http://localhost:11434/v1.")
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._client = http_client or httpx.Client()

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int = 1024,
        timeout: float = 60.0,
    ) -> Reply:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(system, messages),
            "max_tokens": max_tokens,
            "stream": False,
        }
        if tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in tools
            ]
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        where = f"openai ({self.model})"
        try:
            response = self._client.post(self._url, json=body, headers=headers, timeout=timeout)
        except httpx.TimeoutException:
            raise TransportError(f"{where} timed out after {timeout:g}s") from None
        except httpx.HTTPError as exc:
            detail = _short(_redact(f"{type(exc).__name__}: {exc}", self._api_key))
            raise TransportError(f"{where} could not be reached at {self._url}: {detail}") from None
        if response.status_code >= 400:
            raise self._status_error(response) from None
        try:
            return self._reply(response.json())
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise TransportError(
                f"{where} answered something that is not a chat completion: {_short(repr(exc))}"
            ) from None

    def abort(self) -> None:
        """Drop the request in flight (the client went away): its connection is closed."""
        self._client.close()

    def _status_error(self, response: httpx.Response) -> Exception:
        status = response.status_code
        try:
            payload = response.json()
            error = payload.get("error") if isinstance(payload, dict) else None
            body = (error.get("message") if isinstance(error, dict) else error) or payload
        except ValueError:
            body = response.text
        detail = _short(_redact(str(body), self._api_key))
        where = f"openai ({self.model})"
        if _is_transient(status):
            return TransportError(f"{where} failed on its side ({status}): {detail}")
        advice = _advice(status, "COBERTURA_OPENAI_KEY", "COBERTURA_OPENAI_MODEL", "COBERTURA_OPENAI_BASE_URL")
        return ProviderError(f"{where}: {advice}. The endpoint said: {detail}")

    def _reply(self, payload: dict) -> Reply:
        choice = payload["choices"][0]
        message = choice["message"]
        calls = tuple(
            ToolCall(
                id=call.get("id") or f"call_{index}",
                name=call["function"]["name"],
                arguments=parse_arguments(call["function"].get("arguments")),
            )
            for index, call in enumerate(message.get("tool_calls") or ())
        )
        usage = payload.get("usage") or {}
        return Reply(
            text=message.get("content") or "",
            tool_calls=calls,
            provider=self.name,
            model=payload.get("model") or self.model,
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            ),
            stop_reason=_stop_reason(choice.get("finish_reason"), bool(calls)),
        )


# ------------------------------------------------------------------------------------------------ chain


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
