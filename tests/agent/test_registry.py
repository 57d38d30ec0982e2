"""The tool registry: one object per tool, its kind decides what its results are worth to the gate."""
from __future__ import annotations

import json

import pytest

from core.agent.builtin_tools import builtin_tools
from core.agent.protocol import ToolCall
from core.agent.registry import Tool, ToolEnv, ToolKind, ToolRegistry, TurnEvidence

SCHEMA = {"type": "object", "properties": {}}


def returning(texts: dict):
    def handler(env, arguments):
        return {"status": "found", "order": "A-1", "_ids": list(texts), "_texts": dict(texts), "_trace": {"ms": 1}}
    return handler


def env(**catalogs) -> ToolEnv:
    return ToolEnv(ctx=None, services=None, history=[], evidence=TurnEvidence(), **catalogs)


@pytest.mark.parametrize("kind, citable, live", [
    (ToolKind.KNOWLEDGE, True, False), (ToolKind.LIVE, False, True), (ToolKind.WRITE, False, False),
    (ToolKind.UI, False, False)])
def test_only_a_knowledge_tool_makes_text_citable_and_only_a_live_one_files_live_data(kind, citable, live):
    registry = ToolRegistry([Tool("lookup", "Look something up", SCHEMA, kind, returning({"c1": "Plazo: 30 días."}))])
    turn = env()
    message = registry.run(turn, ToolCall("t1", "lookup", {}))
    assert ("c1" in turn.evidence.texts) is citable and bool(turn.evidence.live) is live
    assert registry.supports_claims("lookup") is citable
    sent = json.loads(message.content)
    assert sent["order"] == "A-1" and not {"_ids", "_texts", "_trace"} & set(sent)  # what only the trace keeps
    marked = {"live": True, "live_id": "live-1"} if live else {}  # a live call is marked live in the trace
    assert turn.evidence.calls[-1] == {"tool": "lookup", "arguments": {}, "status": "found", "ids": ["c1"], "ms": 1,
                                       **marked}


def test_a_failing_tool_is_an_error_result_for_the_model_and_a_fault_of_the_turn():
    def explode(env, arguments):
        raise RuntimeError("database is down")

    registry, turn = ToolRegistry([Tool("orders", "Orders", SCHEMA, ToolKind.LIVE, explode)]), env()
    message = registry.run(turn, ToolCall("t1", "orders", {}))
    assert message.is_error and "failed (RuntimeError)" in message.content and "database" not in message.content
    assert turn.evidence.faults == 1 and turn.evidence.live == []


def test_an_unknown_or_unoffered_tool_answers_with_the_tools_there_are():
    registry, turn = ToolRegistry(builtin_tools()), env()  # no handoff reasons, no sections: those are not offered
    assert [s.name for s in registry.specs(turn)] == ["search_knowledge", "browse", "read", "clarify"]
    for name in ("order_status", "handoff"):
        message = registry.run(turn, ToolCall("t1", name, {}))
        assert message.is_error and f"There is no tool '{name}'" in message.content
    offered = env(reasons={"customer_request": "The customer asked for a person"}, sections={"envios": "Envíos"})
    assert [s.name for s in registry.specs(offered)][-2:] == ["handoff", "show_section"]
    assert "customer_request" in registry.get("handoff").spec(offered).description


def test_tool_names_are_unique():
    tool = Tool("lookup", "Look something up", SCHEMA, ToolKind.KNOWLEDGE, returning({}))
    with pytest.raises(ValueError, match="registered already"):
        ToolRegistry([tool, tool])
