"""Any OpenAI-compatible ``/chat/completions`` endpoint with function calling (A1)."""
from __future__ import annotations

import json
from typing import Any, Sequence

import httpx

from core.agent.protocol import Message, Reply, ToolCall, ToolSpec, TransportError, Usage
from core.agent.providers.errors import ProviderError, advice, is_transient, redact, short, stop_reason
from core.base.config import ConfigError


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
                {"type": "function",
                 "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in tools
            ]
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        where = f"openai ({self.model})"
        try:
            response = self._client.post(self._url, json=body, headers=headers, timeout=timeout)
        except httpx.TimeoutException:
            raise TransportError(f"{where} timed out after {timeout:g}s") from None
        except httpx.HTTPError as exc:
            detail = short(redact(f"{type(exc).__name__}: {exc}", self._api_key))
            raise TransportError(f"{where} could not be reached at {self._url}: {detail}") from None
        if response.status_code >= 400:
            raise self._status_error(response) from None
        try:
            return self._reply(response.json())
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise TransportError(
                f"{where} answered something that is not a chat completion: {short(repr(exc))}"
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
        detail = short(redact(str(body), self._api_key))
        where = f"openai ({self.model})"
        if is_transient(status):
            return TransportError(f"{where} failed on its side ({status}): {detail}")
        hint = advice(status, "COBERTURA_OPENAI_KEY", "COBERTURA_OPENAI_MODEL", "COBERTURA_OPENAI_BASE_URL")
        return ProviderError(f"{where}: {hint}. The endpoint said: {detail}")

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
            stop_reason=stop_reason(choice.get("finish_reason"), bool(calls)),
        )
