"""A scripted LLM server on 127.0.0.1 for provider tests: no network beyond the loopback, no live API.

It serves ``POST /v1/messages`` (Anthropic) and ``POST /v1/chat/completions`` (OpenAI-compatible) from
one queue of scripted responses, in order, and records every request. A response can be any status
(500, 529, 429, 401 ...) and can be delayed to provoke client timeouts; stopping the server cuts
pending delays short, so tests stay fast.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATHS = ("/v1/messages", "/v1/chat/completions")


@dataclass
class Scripted:
    body: Any
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    json: Any


class FakeLLMServer:
    """``enqueue()`` responses, point a provider at ``url`` (Anthropic) or ``openai_url``, read ``requests``."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # a short poll interval makes stop() quick (shutdown waits for the next poll)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    def enqueue(self, body: Any = None, *, status: int = 200, delay: float = 0.0,
                headers: dict[str, str] | None = None) -> None:
        """Script the next response: a JSON body (or a str sent as is), its status, a delay before it."""
        with self._lock:
            self._queue.append(Scripted(body, status, delay, headers or {}))

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self) -> Scripted:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return Scripted({"error": {"type": "fake_server", "message": "nothing enqueued"}}, status=500)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw) if raw else None
                except ValueError:
                    payload = raw.decode("utf-8", "replace")
                with fake._lock:
                    fake.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, payload))
                if self.path not in PATHS:
                    self._send(Scripted({"error": {"message": f"no route {self.path}"}}, status=404))
                    return
                scripted = fake._next()
                if scripted.delay and fake._stopping.wait(scripted.delay):
                    return  # the server is stopping: drop the response
                self._send(scripted)

            def _send(self, scripted: Scripted) -> None:
                data = scripted.body if isinstance(scripted.body, str) else json.dumps(scripted.body)
                encoded = data.encode("utf-8")
                try:
                    self.send_response(scripted.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(encoded)))
                    for name, value in scripted.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(encoded)
                except OSError:
                    pass  # the client gave up (a timeout test): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        return Handler


# ------------------------------------------------------------------------- scripted response builders


def anthropic_reply(text: str = "", tool_uses: list[tuple[str, str, dict]] = (), *, stop_reason: str | None = None,
                    model: str = "claude-test", input_tokens: int = 11, output_tokens: int = 7) -> dict:
    """A Messages API response: text, then ``(id, name, input)`` tool_use blocks."""
    content: list[dict] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in tool_uses]
    return {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"), "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def anthropic_error(status: int, message: str = "boom") -> dict:
    kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error",
            529: "overloaded_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def openai_reply(text: str | None = None, tool_calls: list[tuple[str, str, str]] = (), *,
                 finish_reason: str | None = None, model: str = "llama-test", prompt_tokens: int = 13,
                 completion_tokens: int = 5) -> dict:
    """A chat completion: ``(id, name, arguments-as-JSON-string)`` tool calls."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in tool_calls
        ]
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }
