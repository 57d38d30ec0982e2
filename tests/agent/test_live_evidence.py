"""Live results as evidence of one turn (A3): the registry numbers them live-1, live-2 ... per turn, tells the model
how to cite them, always reports an empty result as an explicit empty note, and marks every live call in the trace."""
from __future__ import annotations

import json

from core.agent import prompts
from core.agent.loop import Agent
from core.agent.protocol import ToolCall
from core.agent.registry import EMPTY_NOTE, Tool, ToolEnv, ToolKind, ToolRegistry, TurnEvidence
from core.channels import conversations
from tests.fakes import ScriptedProvider

SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}}
ORDERS = {"1001": {"estado": "enviado", "transportista": "SEUR"}, "1002": {"estado": "pendiente"}}


def order_handler(env, arguments):
    data = ORDERS.get(arguments.get("order_id", ""))
    base = {"operation": "order_status", "title": "Estado del pedido", "params": dict(arguments),
            "fetched_at": "2026-12-01T10:00:00Z", "live_id": "live-99", "cite_as": "[[cite:live-99]]"}  # replaced
    if data is None:
        return {"status": "empty", **base}
    return {"status": "found", **base, "data": data, "_trace": {"ms": 3}}


def failing(env, arguments):
    raise ConnectionError("shop API down")


LIVE = Tool("order_status", "Live order status", SCHEMA, ToolKind.LIVE, order_handler)
BROKEN = Tool("stock_level", "Live stock", SCHEMA, ToolKind.LIVE, failing)


def env() -> ToolEnv:
    return ToolEnv(ctx=None, services=None, history=[], evidence=TurnEvidence())


def run(registry, turn, name, **arguments) -> dict:
    return json.loads(registry.run(turn, ToolCall("c1", name, arguments)).content)


def test_found_results_get_this_turns_ids_in_order_and_the_model_is_told_how_to_cite_them():
    registry, turn = ToolRegistry([LIVE]), env()
    first, second = run(registry, turn, "order_status", order_id="1001"), run(registry, turn, "order_status",
                                                                               order_id="1002")
    assert (first["live_id"], first["cite_as"]) == ("live-1", "[[cite:live-1]]")
    assert (second["live_id"], second["cite_as"]) == ("live-2", "[[cite:live-2]]")
    entry = turn.evidence.live_ids["live-1"]
    assert entry["operation"] == "order_status" and entry["title"] == "Estado del pedido"
    assert entry["fetched_at"] == "2026-12-01T10:00:00Z" and entry["status"] == "found"
    assert json.loads(entry["text"])["data"] == ORDERS["1001"] and "live-99" not in entry["text"]
    assert turn.evidence.live == [turn.evidence.live_ids["live-1"]["text"], turn.evidence.live_ids["live-2"]["text"]]
    assert turn.evidence.texts == {}  # live data is no knowledge: nothing citable in a later turn
    assert turn.evidence.live_texts() == {k: v["text"] for k, v in turn.evidence.live_ids.items()}


def test_an_empty_result_reaches_the_model_as_an_explicit_empty_note():
    registry, turn = ToolRegistry([LIVE]), env()
    sent = run(registry, turn, "order_status", order_id="9999")
    assert sent["status"] == "empty" and sent["message"] == EMPTY_NOTE and sent["live_id"] == "live-1"
    assert sent["say_exactly"] == {lang: f"{prompts.message('live_empty', lang)} [[cite:live-1]]"
                                   for lang in prompts.LANGUAGES}
    assert turn.evidence.live == []  # an empty result supports no fact
    assert turn.evidence.live_empty() == frozenset({"live-1"}) and turn.evidence.live_ids["live-1"]["status"] == "empty"


def test_a_handlers_own_empty_message_is_kept():
    def quiet(env, arguments):
        return {"status": "empty", "message": "No order with that number."}

    registry, turn = ToolRegistry([Tool("order_status", "x", SCHEMA, ToolKind.LIVE, quiet)]), env()
    assert run(registry, turn, "order_status")["message"] == "No order with that number."


def test_a_failing_live_tool_gets_no_id_and_is_a_fault():
    registry, turn = ToolRegistry([BROKEN]), env()
    message = registry.run(turn, ToolCall("c1", "stock_level", {}))
    assert message.is_error and "live_id" not in json.loads(message.content)
    assert turn.evidence.faults == 1 and turn.evidence.live_ids == {}
    assert turn.evidence.calls[-1]["live"] is True and "live_id" not in turn.evidence.calls[-1]


def test_every_live_call_is_marked_live_in_the_trace_and_no_other_is():
    knowledge = Tool("lookup", "Knowledge", SCHEMA, ToolKind.KNOWLEDGE,
                     lambda env, arguments: {"status": "found", "_ids": ["c1"], "_texts": {"c1": "Texto."}})
    registry, turn = ToolRegistry([LIVE, knowledge]), env()
    run(registry, turn, "order_status", order_id="1001")
    run(registry, turn, "order_status", order_id="9999")
    run(registry, turn, "lookup")
    run(registry, turn, "order_status_typo")
    found, empty, looked_up, unknown = turn.evidence.calls
    assert found == {"tool": "order_status", "arguments": {"order_id": "1001"}, "status": "found", "ids": [], "ms": 3,
                     "live": True, "live_id": "live-1"}
    assert empty["live"] is True and empty["live_id"] == "live-2" and empty["status"] == "empty"
    assert "live" not in looked_up and "live" not in unknown


def test_through_the_agent_live_ids_restart_each_turn_and_never_become_evidence_ids(kb, rt):
    def bot():
        return Agent(rt, ScriptedProvider(("order_status", {"order_id": "1001"}),
                                          "Tu pedido 1001 está enviado con SEUR. [[cite:live-1]]"),
                     extra_tools=[LIVE])

    first = rt.turns.run(kb, bot(), "¿Dónde está mi pedido 1001?")
    second = rt.turns.run(kb, bot(), "¿Y mi pedido 1001 ahora?", conversation_id=first.conversation_id)
    for turn in (first, second):
        assert turn.status == "answered" and turn.citations[0]["id"] == "live-1" and turn.citations[0]["live"]
        [call] = turn.trace.tools
        assert call["live"] is True and call["live_id"] == "live-1"
    assert not any(i.startswith("live-") for i in conversations.evidence_ids(kb, rt.store, first.conversation_id))


def test_an_empty_live_result_said_with_the_fixed_sentence_is_an_answer_and_no_gap(kb, rt):
    def say_empty(messages):
        return json.loads(messages[-1].content)["say_exactly"]["es"]

    bot = Agent(rt, ScriptedProvider(("order_status", {"order_id": "9999"}), say_empty), extra_tools=[LIVE])
    result = rt.turns.run(kb, bot, "¿Dónde está mi pedido 9999?")
    assert result.status == "answered" and result.gap_id is None and rt.backlog.gaps(kb) == []
    assert result.answer.startswith(prompts.message("live_empty", "es")) and result.citations[0]["live"] is True


def test_an_invented_fact_over_an_empty_live_result_is_withheld(kb, rt):
    invent = "Tu pedido 9999 llega mañana. [[cite:live-1]]"
    bot = Agent(rt, ScriptedProvider(("order_status", {"order_id": "9999"}), invent, invent), extra_tools=[LIVE])
    result = rt.turns.run(kb, bot, "¿Dónde está mi pedido 9999?")
    assert result.status != "answered" and "mañana" not in result.answer
