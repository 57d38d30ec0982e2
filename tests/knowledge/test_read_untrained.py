"""Reading a source that is not trained yet says so (issue 16, item 14), through the CLI and the agent's tool.

Before the fix ``python -m core read SLUG PATH`` of an untrained document answered "1 document(s) left out;
read them by path: PATH" (exit 0): an index pointing at itself."""
from __future__ import annotations

import json

from core.agent.builtin_tools import builtin_tools
from core.agent.protocol import ToolCall
from core.agent.registry import ToolEnv, ToolRegistry, TurnEvidence
from core.knowledge import sources
from tests.test_cli import data_dir, run  # noqa: F401  (the CLI's fixture and runner)


def test_cli_read_of_an_untrained_document_says_it_is_not_trained(data_dir, capsys, tmp_path):  # noqa: F811
    assert run(capsys, "tenants", "create", "acme")[0] == 0
    doc = tmp_path / "hours.md"
    doc.write_text("# Hours\n\nOpen 9 to 5.", encoding="utf-8")
    assert run(capsys, "ingest", "acme", str(doc))[0] == 0
    code, out, err = run(capsys, "read", "acme", "hours")
    assert code == 1 and out == ""
    assert err.startswith("error: 'hours' is not trained yet") and "left out" not in err
    assert "Train with `python -m core train acme`" in err and "read them by path" not in err
    code, out, _ = run(capsys, "read", "acme", "hours", "--json")
    data = json.loads(out)
    assert data["found"] and not data["text_bearing"] and data["omitted"][0]["why"] == "not trained yet"


def test_a_folder_read_names_the_untrained_apart_from_what_did_not_fit(ctx, rt):
    sources.save(ctx, rt.store, "kb/a", title="A", content="First article. " * 20)
    sources.save(ctx, rt.store, "kb/b", title="B", content="Second article. " * 20)
    rt.index.train(ctx)
    sources.save(ctx, rt.store, "kb/c", title="C", content="Not trained yet.")
    result = rt.knowledge.read(ctx, "kb", limit=400)
    assert [d["path"] for d in result.documents] == ["kb/a"]
    assert result.message == ("1 document(s) not trained yet, so without text to read or cite (readable after the next "
                              "training): kb/c. 1 document(s) left out over the 400-character limit; read them one "
                              "by one by path: kb/b.")


def test_the_read_tool_tells_the_model_the_document_has_no_text_yet(ctx, rt):
    sources.save(ctx, rt.store, "kb/new", title="New", content="Brand new plan.")
    env = ToolEnv(ctx, rt, [], TurnEvidence())
    sent = json.loads(ToolRegistry(builtin_tools()).run(env, ToolCall("c1", "read", {"path": "kb/new"})).content)
    assert sent["status"] == "empty" and sent["passages"] == []
    assert sent["message"].startswith("'kb/new' is not trained yet, so it has no text to read or cite")
    assert "Search or read other paths" in sent["message"] and "read them by path" not in sent["message"]
