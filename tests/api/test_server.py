"""The public endpoint behind a real ASGI server (uvicorn on a loopback port): a client that goes away
cancels the turn (no further provider round or tool call, nothing recorded) within a second."""
from __future__ import annotations

import threading
import time

import httpx
import pytest

from core.agent.protocol import Reply, ToolCall
from core.channels import conversations
from tests.api.test_chat import Api, acme  # noqa: F401  (the fixture)
from tests.servers import in_thread

ROUND_SECONDS = 0.4


class SlowSearcher:
    """A provider that takes ROUND_SECONDS per round and keeps searching (six rounds, about 2.4 s in all)."""

    name, model = "slow", "slow-1"

    def __init__(self):
        self.started: list[float] = []
        self.tools_seen = 0

    def complete(self, system, messages, tools, *, max_tokens=1024, timeout=60.0):
        self.started.append(time.monotonic())
        self.tools_seen = sum(m.role == "tool" for m in messages)
        time.sleep(ROUND_SECONDS)
        n = len(self.started)
        return Reply("", (ToolCall(f"c{n}", "search_knowledge", {"query": f"envíos {n}"}),), self.name, self.model,
                     stop_reason="tool_use")


@pytest.fixture
def server(rt, acme):  # noqa: F811
    provider = SlowSearcher()
    api = Api(rt, provider=lambda: provider)
    with in_thread(api.app, seconds=10) as base:
        yield base, api, provider
    api.close()


def test_a_client_disconnect_cancels_the_turn_within_a_second(server, rt, acme):  # noqa: F811
    base, api, provider = server
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", f"{base}/v1/chat", json={"message": "¿Cuánto tardan los envíos a Canarias?"},
                           headers={"X-Site-Key": api.key("acme")}) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("event: tool"):  # the turn is under way: one round done
                    break
        left = time.monotonic()  # leaving the block closes the connection
    time.sleep(6 * ROUND_SECONDS)  # the whole uncancelled turn would be over by now
    late = [t for t in provider.started if t > left + 1.0]
    assert late == [] and len(provider.started) <= 3, provider.started
    questions = conversations.question_log(acme, rt.store)
    assert len(questions) == 1  # the question was logged when the chat opened...
    assert conversations.turns(acme, rt.store, questions[0]["conversation_id"]) == []  # ...and no turn was recorded
    assert rt.backlog.gaps(acme) == []


def test_a_full_stream_over_the_network_ends_with_done(server):
    base, api, provider = server
    provider_rounds = len(provider.started)
    with httpx.Client(timeout=20) as client:
        body = client.post(f"{base}/v1/chat", json={"message": "¿Cuánto tardan los envíos?"},
                           headers={"X-Site-Key": api.key("acme")}).text
    assert body.count("event: done") == 1 and body.rstrip().splitlines()[-2] == "event: done"
    assert len(provider.started) - provider_rounds == 6  # the six rounds ran; then the turn was cut (truncated)


@pytest.mark.parametrize("hook", ["token", "callable"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_cancelling_drops_a_remote_provider_call_in_flight(rt, acme, kind, hook):  # noqa: F811
    """A turn cancelled while the model is still thinking stops at once, not when the model answers: through a
    CancelToken (the endpoint's, which wakes the wait) or a plain hook (polled)."""
    from core.agent.cancel import Cancelled, CancelToken
    from core.agent.loop import Agent
    from core.agent.providers.anthropic import AnthropicProvider
    from core.agent.providers.openai_compat import OpenAICompatibleProvider
    from tests.fake_llm_server import FakeLLMServer, anthropic_reply, openai_reply

    with FakeLLMServer() as fake:
        if kind == "openai":
            fake.enqueue(openai_reply("Hola."), delay=5.0)
            provider = OpenAICompatibleProvider(fake.openai_url, "m")
        else:
            fake.enqueue(anthropic_reply("Hola."), delay=5.0)
            provider = AnthropicProvider("sk-test", "claude-test", base_url=fake.url)
        arrived: list[float] = []  # when the model received the request

        def seen() -> bool:
            if fake.requests and not arrived:
                arrived.append(time.monotonic())
            return bool(arrived) and time.monotonic() - arrived[0] > 0.3

        if hook == "token":
            cancelled = CancelToken()

            def cancel_when_seen():
                while not seen():
                    time.sleep(0.01)
                cancelled.cancel()

            threading.Thread(target=cancel_when_seen, daemon=True).start()
        else:
            cancelled = seen
        with pytest.raises(Cancelled):
            rt.turns.run(acme, Agent(rt, provider), "hola", cancelled=cancelled)
        assert len(fake.requests) == 1 and time.monotonic() - arrived[0] < 1.0  # not the 5 s the model takes
