"""Claude through the official ``anthropic`` SDK (A1): our neutral messages to the Messages API and back."""
from __future__ import annotations

from typing import Any, Sequence

from core.agent.protocol import Message, Reply, ToolCall, ToolSpec, TransportError, Usage
from core.agent.providers.errors import ProviderError, advice, is_transient, redact, short, stop_reason
from core.base.config import ConfigError

ANTHROPIC_API_URL = "https://api.anthropic.com"


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
                f"anthropic ({self.model}) answered something that is not a Messages API reply: {short(repr(exc))}"
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
            stop_reason=stop_reason(response.stop_reason, bool(calls)),
        )

    def _translate_error(self, exc: Exception, timeout: float) -> Exception:
        sdk = self._sdk
        where = f"anthropic ({self.model})"
        if isinstance(exc, sdk.APITimeoutError):
            return TransportError(f"{where} timed out after {timeout:g}s")
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc
            detail = short(redact(f"{type(cause).__name__}: {cause}", self._api_key))
            return TransportError(f"{where} could not be reached at {self._base_url}: {detail}")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            body = exc.api_message or (exc.body if exc.body is not None else exc.response.text)
            detail = short(redact(str(body), self._api_key))
            if is_transient(status):
                return TransportError(f"{where} failed on its side ({status}): {detail}")
            hint = advice(status, "ANTHROPIC_API_KEY", "COBERTURA_ANTHROPIC_MODEL", "COBERTURA_ANTHROPIC_BASE_URL")
            return ProviderError(f"{where}: {hint}. The API said: {detail}")
        return TransportError(f"{where} failed: {short(redact(str(exc), self._api_key))}")
