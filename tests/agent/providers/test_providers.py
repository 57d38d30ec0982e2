"""Providers (A1): wire translation, response mapping, error sorting, failover, configuration.

Never a live API: socket-free tests inject a MockTransport into the HTTP client; the rest talk to the
scripted server in tests/fake_llm_server.py on the loopback.
"""
from __future__ import annotations

import json
from dataclasses import replace

import httpx
import httpx2
import pytest

from core.agent.protocol import Message, Reply, ToolCall, ToolSpec, TransportError, Usage
from core.agent.providers.anthropic import AnthropicProvider
from core.agent.providers.chain import ProviderChain, build_provider
from core.agent.providers.errors import ProviderError
from core.agent.providers.openai_compat import OpenAICompatibleProvider, parse_arguments
from core.base.config import ConfigError, Settings, load_settings
from tests.fake_llm_server import FakeLLMServer, anthropic_error, anthropic_reply, openai_reply
from tests.servers import free_port

KEY = "sk-ant-test-SECRET-0123456789"
OPENAI_KEY = "sk-local-SECRET-abcdef"
SYSTEM = "Answer only from the knowledge base."
TOOLS = (
    ToolSpec("search_knowledge", "Search the knowledge base.",
             {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    ToolSpec("read", "Read one document.", {"type": "object", "properties": {"path": {"type": "string"}}}),
)
CONVERSATION = (
    Message("user", "¿Cuánto cuesta el plan Pro?"),
    Message("assistant", "Voy a buscarlo.", tool_calls=(
        ToolCall("call_1", "search_knowledge", {"query": "precio plan Pro"}),
        ToolCall("call_2", "read", {"path": "planes/pro.md"}),
    )),
    Message("tool", '{"results": [{"id": "c1", "text": "Pro: 29 €/mes"}]}', tool_call_id="call_1",
            name="search_knowledge"),
    Message("tool", '{"error": "not found"}', tool_call_id="call_2", name="read", is_error=True),
    Message("assistant", "", tool_calls=(ToolCall("call_3", "search_knowledge", {"query": "Basic"}),)),
    Message("tool", '{"results": []}', tool_call_id="call_3", name="search_knowledge"),
    Message("user", "¿Y el plan Basic?"),
)

ANTHROPIC_MESSAGES = [
    {"role": "user", "content": "¿Cuánto cuesta el plan Pro?"},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Voy a buscarlo."},
        {"type": "tool_use", "id": "call_1", "name": "search_knowledge", "input": {"query": "precio plan Pro"}},
        {"type": "tool_use", "id": "call_2", "name": "read", "input": {"path": "planes/pro.md"}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1",
         "content": '{"results": [{"id": "c1", "text": "Pro: 29 €/mes"}]}', "is_error": False},
        {"type": "tool_result", "tool_use_id": "call_2", "content": '{"error": "not found"}', "is_error": True},
    ]},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_3", "name": "search_knowledge", "input": {"query": "Basic"}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_3", "content": '{"results": []}', "is_error": False},
    ]},
    {"role": "user", "content": "¿Y el plan Basic?"},
]
ANTHROPIC_TOOLS = [
    {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS
]

OPENAI_MESSAGES = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "¿Cuánto cuesta el plan Pro?"},
    {"role": "assistant", "content": "Voy a buscarlo.", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "search_knowledge", "arguments": '{"query": "precio plan Pro"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": '{"path": "planes/pro.md"}'}},
    ]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"results": [{"id": "c1", "text": "Pro: 29 €/mes"}]}'},
    {"role": "tool", "tool_call_id": "call_2", "content": '{"error": "not found"}'},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_3", "type": "function",
         "function": {"name": "search_knowledge", "arguments": '{"query": "Basic"}'}},
    ]},
    {"role": "tool", "tool_call_id": "call_3", "content": '{"results": []}'},
    {"role": "user", "content": "¿Y el plan Basic?"},
]
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
    for t in TOOLS
]


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def second_server():
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def closed_port_url():
    """A loopback URL where nothing listens: connecting is refused at once."""
    return f"http://127.0.0.1:{free_port()}"


def mock_anthropic(body: dict, status: int = 200):
    """An AnthropicProvider over httpx2.MockTransport, and the list its requests land in."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(status, json=body)

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicProvider(KEY, "claude-sonnet-5-5", base_url="http://anthropic.test", http_client=client), seen


def mock_openai(body: dict, status: int = 200, api_key: str = ""):
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=body)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAICompatibleProvider("http://ollama.test/v1/", "llama3.1", api_key, http_client=client), seen


def anthropic_via(server: FakeLLMServer) -> AnthropicProvider:
    return AnthropicProvider(KEY, "claude-sonnet-5-5", base_url=server.url)


def openai_via(server: FakeLLMServer, api_key: str = OPENAI_KEY) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(server.openai_url, "llama3.1", api_key)


# ------------------------------------------------------------------------------------------ Anthropic


def test_anthropic_request_carries_system_tools_and_the_whole_conversation():
    provider, seen = mock_anthropic(anthropic_reply("ok"))
    provider.complete(SYSTEM, CONVERSATION, TOOLS, max_tokens=321, timeout=5)
    (request,) = seen
    assert request.method == "POST" and request.url == "http://anthropic.test/v1/messages"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(request.content) == {
        "model": "claude-sonnet-5-5", "max_tokens": 321, "system": SYSTEM,
        "tools": ANTHROPIC_TOOLS, "messages": ANTHROPIC_MESSAGES,
    }


def test_anthropic_request_without_system_or_tools_leaves_them_out():
    provider, seen = mock_anthropic(anthropic_reply("ok"))
    provider.complete("", [Message("user", "hola")], [])
    body = json.loads(seen[0].content)
    assert "system" not in body and "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "hola"}]


def test_anthropic_reply_maps_text_tool_calls_usage_and_model():
    body = anthropic_reply("Busco eso.", [("toolu_1", "search_knowledge", {"query": "Pro"}),
                                          ("toolu_2", "read", {"path": "a.md"})], model="claude-sonnet-5-5-20990101",
                           input_tokens=120, output_tokens=30)
    body["content"].append({"type": "text", "text": " Un momento."})
    body["usage"].update(cache_read_input_tokens=50, cache_creation_input_tokens=5)
    provider, _ = mock_anthropic(body)
    reply = provider.complete(SYSTEM, CONVERSATION, TOOLS)
    assert reply == Reply(
        text="Busco eso. Un momento.",
        tool_calls=(ToolCall("toolu_1", "search_knowledge", {"query": "Pro"}),
                    ToolCall("toolu_2", "read", {"path": "a.md"})),
        provider="anthropic", model="claude-sonnet-5-5-20990101",
        usage=Usage(input_tokens=175, output_tokens=30), stop_reason="tool_use",
    )


@pytest.mark.parametrize("reason, expected", [
    ("end_turn", "end"), ("stop_sequence", "end"), ("refusal", "end"), ("pause_turn", "end"),
    ("tool_use", "tool_use"), ("max_tokens", "max_tokens"), ("model_context_window_exceeded", "max_tokens"),
])
def test_anthropic_stop_reason_mapping(reason, expected):
    provider, _ = mock_anthropic(anthropic_reply("x", stop_reason=reason))
    assert provider.complete("", [Message("user", "q")], []).stop_reason == expected


def test_anthropic_http_client_must_be_an_httpx2_client():
    with pytest.raises(TypeError, match="httpx2"):
        AnthropicProvider(KEY, "claude-sonnet-5-5", http_client=httpx.Client())


def test_anthropic_round_trip_over_the_fake_server(server):
    server.enqueue(anthropic_reply("El plan Basic cuesta 9 €/mes.", model="claude-sonnet-5-5"))
    reply = anthropic_via(server).complete(SYSTEM, CONVERSATION, TOOLS, timeout=5)
    assert (reply.text, reply.provider, reply.stop_reason) == ("El plan Basic cuesta 9 €/mes.", "anthropic", "end")
    assert reply.usage == Usage(11, 7)
    (request,) = server.requests
    assert request.path == "/v1/messages" and request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json["messages"] == ANTHROPIC_MESSAGES and request.json["tools"] == ANTHROPIC_TOOLS


@pytest.mark.parametrize("status", [500, 502, 503, 529, 429, 408, 409])
def test_anthropic_server_side_failures_are_transport_errors(server, status):
    server.enqueue(anthropic_error(status, "try later"), status=status)
    with pytest.raises(TransportError, match=rf"anthropic .*\({status}\): try later"):
        anthropic_via(server).complete("", [Message("user", "q")], [], timeout=5)
    assert len(server.requests) == 1  # no hidden SDK retries: the chain decides


def test_anthropic_rejected_key_says_what_to_fix_and_never_shows_the_key(server):
    server.enqueue(anthropic_error(401, f"invalid x-api-key {KEY}"), status=401)
    with pytest.raises(ProviderError) as caught:
        anthropic_via(server).complete("", [Message("user", "q")], [], timeout=5)
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY was rejected (401): check the key" in message
    assert KEY not in message and "SECRET" not in message


@pytest.mark.parametrize("status, advice", [
    (400, r"request was rejected \(400\)"),
    (403, "not allowed"),
    (404, "check COBERTURA_ANTHROPIC_MODEL and COBERTURA_ANTHROPIC_BASE_URL"),
])
def test_anthropic_configuration_errors_are_provider_errors(server, status, advice):
    server.enqueue(anthropic_error(status), status=status)
    with pytest.raises(ProviderError, match=advice):
        anthropic_via(server).complete("", [Message("user", "q")], [], timeout=5)


def test_anthropic_timeout_is_a_transport_error(server):
    server.enqueue(anthropic_reply("late"), delay=5)
    with pytest.raises(TransportError, match=r"timed out after 0.3s"):
        anthropic_via(server).complete("", [Message("user", "q")], [], timeout=0.3)


def test_anthropic_unreachable_is_a_transport_error(closed_port_url):
    provider = AnthropicProvider(KEY, "claude-sonnet-5-5", base_url=closed_port_url)
    with pytest.raises(TransportError, match="could not be reached") as caught:
        provider.complete("", [Message("user", "q")], [], timeout=2)
    assert KEY not in str(caught.value)


def test_anthropic_reply_that_is_not_a_message_is_a_transport_error():
    provider, _ = mock_anthropic({"unexpected": True})
    with pytest.raises(TransportError, match="not a Messages API reply"):
        provider.complete("", [Message("user", "q")], [])


# ---------------------------------------------------------------------------------- OpenAI-compatible


def test_openai_request_carries_system_tools_and_the_whole_conversation():
    provider, seen = mock_openai(openai_reply("ok"), api_key=OPENAI_KEY)
    provider.complete(SYSTEM, CONVERSATION, TOOLS, max_tokens=222, timeout=5)
    (request,) = seen
    assert request.url == "http://ollama.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert json.loads(request.content) == {
        "model": "llama3.1", "messages": OPENAI_MESSAGES, "tools": OPENAI_TOOLS, "max_tokens": 222, "stream": False,
    }


def test_openai_request_without_key_sends_no_authorization():
    provider, seen = mock_openai(openai_reply("ok"))
    provider.complete("", [Message("user", "hola")], [])
    assert "authorization" not in seen[0].headers
    body = json.loads(seen[0].content)
    assert body["messages"] == [{"role": "user", "content": "hola"}] and "tools" not in body


def test_openai_reply_maps_null_content_tool_calls_and_usage():
    body = openai_reply(None, [("call_a", "search_knowledge", '{"query": "Pro"}'), ("call_b", "read", "")],
                        model="llama3.1:8b", prompt_tokens=40, completion_tokens=9)
    provider, _ = mock_openai(body)
    assert provider.complete(SYSTEM, CONVERSATION, TOOLS) == Reply(
        text="", provider="openai", model="llama3.1:8b", usage=Usage(40, 9), stop_reason="tool_use",
        tool_calls=(ToolCall("call_a", "search_knowledge", {"query": "Pro"}), ToolCall("call_b", "read", {})),
    )


def test_openai_invalid_json_arguments_are_kept_raw():
    provider, _ = mock_openai(openai_reply(None, [("call_a", "search_knowledge", '{"query": "Pro"')]))
    (call,) = provider.complete("", [Message("user", "q")], TOOLS).tool_calls
    assert call.arguments == {"_raw": '{"query": "Pro"'}


@pytest.mark.parametrize("raw, expected", [
    ('{"a": 1}', {"a": 1}), ({"a": 1}, {"a": 1}), ("", {}), (None, {}), ("[1, 2]", {"_raw": "[1, 2]"}),
    ("not json", {"_raw": "not json"}), ('"text"', {"_raw": '"text"'}),
])
def test_parse_arguments(raw, expected):
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize("finish, tool_calls, expected", [
    ("stop", (), "end"), ("length", (), "max_tokens"), ("tool_calls", [("c", "read", "{}")], "tool_use"),
    ("stop", [("c", "read", "{}")], "tool_use"),  # Ollama says "stop" beside tool calls
    ("content_filter", (), "end"),
])
def test_openai_finish_reason_mapping(finish, tool_calls, expected):
    provider, _ = mock_openai(openai_reply("x", tool_calls, finish_reason=finish))
    assert provider.complete("", [Message("user", "q")], []).stop_reason == expected


def test_openai_reply_without_usage_counts_zero():
    body = openai_reply("hola")
    del body["usage"]
    provider, _ = mock_openai(body)
    assert provider.complete("", [Message("user", "q")], []).usage == Usage(0, 0)


def test_openai_round_trip_over_the_fake_server(server):
    server.enqueue(openai_reply("El plan Basic cuesta 9 €/mes."))
    reply = openai_via(server).complete(SYSTEM, CONVERSATION, TOOLS, timeout=5)
    assert (reply.text, reply.provider, reply.model, reply.usage) == (
        "El plan Basic cuesta 9 €/mes.", "openai", "llama-test", Usage(13, 5))
    (request,) = server.requests
    assert request.path == "/v1/chat/completions" and request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert request.json["messages"] == OPENAI_MESSAGES and request.json["tools"] == OPENAI_TOOLS


@pytest.mark.parametrize("status", [500, 503, 429, 408])
def test_openai_server_side_failures_are_transport_errors(server, status):
    server.enqueue({"error": {"message": "model is loading"}}, status=status)
    with pytest.raises(TransportError, match=rf"openai .*\({status}\): model is loading"):
        openai_via(server).complete("", [Message("user", "q")], [], timeout=5)


def test_openai_rejected_key_says_what_to_fix_and_never_shows_the_key(server):
    server.enqueue({"error": {"message": f"Incorrect API key provided: {OPENAI_KEY}"}}, status=401)
    with pytest.raises(ProviderError) as caught:
        openai_via(server).complete("", [Message("user", "q")], [], timeout=5)
    assert "COBERTURA_OPENAI_KEY was rejected (401): check the key" in str(caught.value)
    assert OPENAI_KEY not in str(caught.value)


def test_openai_unknown_model_points_at_the_model_setting(server):
    server.enqueue({"error": "model 'llama9' not found"}, status=404)
    with pytest.raises(ProviderError, match="check COBERTURA_OPENAI_MODEL .* model 'llama9' not found"):
        openai_via(server).complete("", [Message("user", "q")], [], timeout=5)


def test_openai_timeout_is_a_transport_error(server):
    server.enqueue(openai_reply("late"), delay=5)
    with pytest.raises(TransportError, match=r"timed out after 0.3s"):
        openai_via(server).complete("", [Message("user", "q")], [], timeout=0.3)


def test_openai_unreachable_is_a_transport_error(closed_port_url):
    provider = OpenAICompatibleProvider(closed_port_url + "/v1", "llama3.1", OPENAI_KEY)
    with pytest.raises(TransportError, match="could not be reached") as caught:
        provider.complete("", [Message("user", "q")], [], timeout=2)
    assert OPENAI_KEY not in str(caught.value)


@pytest.mark.parametrize("body", ["<html>Bad gateway page</html>", {"choices": []}, {"object": "list"}])
def test_openai_reply_that_is_not_a_completion_is_a_transport_error(server, body):
    server.enqueue(body)
    with pytest.raises(TransportError, match="not a chat completion"):
        openai_via(server).complete("", [Message("user", "q")], [], timeout=5)


# ---------------------------------------------------------------------------------------------- chain


def test_chain_fails_over_on_a_transport_error_and_says_who_answered(server, second_server):
    server.enqueue(anthropic_error(500, "internal"), status=500)
    second_server.enqueue(openai_reply("respuesta"))
    chain = ProviderChain([anthropic_via(server), openai_via(second_server)])
    reply = chain.complete(SYSTEM, CONVERSATION, TOOLS, timeout=5)
    assert (reply.text, reply.provider, reply.model) == ("respuesta", "openai", "llama-test")
    assert (chain.name, chain.model) == ("openai", "llama3.1")
    assert [name for name, _ in chain.attempts] == ["anthropic"] and "(500)" in chain.attempts[0][1]
    assert second_server.requests[0].json["messages"] == OPENAI_MESSAGES  # same conversation, other format


def test_chain_does_not_fail_over_on_a_configuration_error(server, second_server):
    server.enqueue(anthropic_error(401, "invalid key"), status=401)
    second_server.enqueue(openai_reply("never"))
    chain = ProviderChain([anthropic_via(server), openai_via(second_server)])
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        chain.complete("", [Message("user", "q")], [], timeout=5)
    assert second_server.requests == []


def test_chain_reports_every_failure_when_all_fail(server, closed_port_url):
    server.enqueue(anthropic_error(529, "overloaded"), status=529)
    chain = ProviderChain([anthropic_via(server), OpenAICompatibleProvider(closed_port_url, "llama3.1")])
    with pytest.raises(TransportError,
                       match=r"every provider failed: anthropic .*\(529\).*; openai .*could not be reached"):
        chain.complete("", [Message("user", "q")], [], timeout=2)
    assert [name for name, _ in chain.attempts] == ["anthropic", "openai"]


def test_chain_attempts_belong_to_the_last_call_only(server):
    server.enqueue(openai_reply("a"), status=503)
    server.enqueue(openai_reply("b"))
    server.enqueue(openai_reply("c"))
    chain = ProviderChain([openai_via(server), openai_via(server)])
    assert chain.complete("", [Message("user", "q")], [], timeout=5).text == "b"
    assert len(chain.attempts) == 1
    assert chain.complete("", [Message("user", "q")], [], timeout=5).text == "c"
    assert chain.attempts == []


def test_chain_needs_a_provider():
    with pytest.raises(ValueError):
        ProviderChain([])


# --------------------------------------------------------------------------------------- build_provider


def settings_from(tmp_path, **env):
    return load_settings({"COBERTURA_DATA_DIR": str(tmp_path), **env})


def test_offline_is_the_default_and_builds_no_provider(tmp_path):
    settings = settings_from(tmp_path)
    assert settings.provider == "offline" and settings.provider_chain == () and settings.llm_timeout == 60
    assert build_provider(settings) is None
    assert build_provider(settings_from(tmp_path, COBERTURA_PROVIDER="offline", ANTHROPIC_API_KEY=KEY)) is None


def test_build_anthropic(tmp_path):
    chain = build_provider(settings_from(tmp_path, COBERTURA_PROVIDER="anthropic", ANTHROPIC_API_KEY=KEY))
    (provider,) = chain.providers
    assert isinstance(provider, AnthropicProvider) and provider.model == "claude-sonnet-5-5"
    assert (chain.name, chain.model) == ("anthropic", "claude-sonnet-5-5")


def test_build_openai(tmp_path):
    chain = build_provider(settings_from(
        tmp_path, COBERTURA_PROVIDER="openai", COBERTURA_OPENAI_BASE_URL="http://localhost:11434/v1",
        COBERTURA_OPENAI_MODEL="llama3.1"))
    (provider,) = chain.providers
    assert isinstance(provider, OpenAICompatibleProvider) and provider.model == "llama3.1"


def test_build_a_chain_in_the_order_written(tmp_path):
    chain = build_provider(settings_from(
        tmp_path, COBERTURA_PROVIDER=" OpenAI , anthropic", ANTHROPIC_API_KEY=KEY,
        COBERTURA_ANTHROPIC_MODEL="claude-haiku-5-5",
        COBERTURA_OPENAI_BASE_URL="http://localhost:8000/v1", COBERTURA_OPENAI_MODEL="qwen"))
    assert [p.name for p in chain.providers] == ["openai", "anthropic"]
    assert chain.providers[1].model == "claude-haiku-5-5"


def test_built_provider_talks_to_the_configured_base_url(tmp_path, server):
    server.enqueue(anthropic_reply("hola"))
    settings = settings_from(tmp_path, COBERTURA_PROVIDER="anthropic", ANTHROPIC_API_KEY=KEY,
                             COBERTURA_ANTHROPIC_BASE_URL=server.url, COBERTURA_LLM_TIMEOUT="5")
    reply = build_provider(settings).complete("", [Message("user", "q")], [], timeout=settings.llm_timeout)
    assert reply.text == "hola" and server.requests[0].json["model"] == "claude-sonnet-5-5"


@pytest.mark.parametrize("env, message", [
    ({"COBERTURA_PROVIDER": "anthropic"}, "ANTHROPIC_API_KEY is not set"),
    ({"COBERTURA_PROVIDER": "openai", "COBERTURA_OPENAI_MODEL": "m"}, "COBERTURA_OPENAI_BASE_URL is not set"),
    ({"COBERTURA_PROVIDER": "openai", "COBERTURA_OPENAI_BASE_URL": "http://x/v1"}, "COBERTURA_OPENAI_MODEL is not set"),
    ({"COBERTURA_PROVIDER": "anthropic,openai", "ANTHROPIC_API_KEY": KEY}, "COBERTURA_OPENAI_BASE_URL is not set"),
    ({"COBERTURA_PROVIDER": "gpt"}, "'gpt', which is not known"),
    ({"COBERTURA_PROVIDER": "anthropic,offline", "ANTHROPIC_API_KEY": KEY}, "'offline' stands alone"),
    ({"COBERTURA_PROVIDER": "anthropic,anthropic", "ANTHROPIC_API_KEY": KEY}, "names a provider twice"),
    ({"COBERTURA_LLM_TIMEOUT": "soon"}, "COBERTURA_LLM_TIMEOUT must be a number"),
    ({"COBERTURA_LLM_TIMEOUT": "0"}, "COBERTURA_LLM_TIMEOUT must be a positive number"),
])
def test_configuration_errors_name_the_variable_to_set(tmp_path, env, message):
    with pytest.raises(ConfigError, match=message):
        settings_from(tmp_path, **env)


def test_build_provider_checks_hand_built_settings_too(tmp_path):
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"):
        build_provider(Settings(data_dir=tmp_path, provider="anthropic"))


def test_keys_stay_out_of_the_settings_repr(tmp_path):
    settings = settings_from(tmp_path, COBERTURA_PROVIDER="anthropic", ANTHROPIC_API_KEY=KEY,
                             COBERTURA_OPENAI_KEY=OPENAI_KEY)
    assert KEY not in repr(settings) and OPENAI_KEY not in repr(settings)
    assert KEY not in repr(replace(settings, operator="x"))
