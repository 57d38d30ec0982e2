import json

import pytest

from core.knowledge import sources


@pytest.fixture
def tree(ctx, rt):
    sources.save(ctx, rt.store, "policies/returns/deadline", title="Return deadline",
                 content="You have 30 days to return an item.", description="How long customers have")
    sources.save(ctx, rt.store, "policies/returns/refunds", title="Refunds",
                 content="Refunds take 5 to 7 working days.")
    sources.save(ctx, rt.store, "policies/shipping", title="Shipping", content="We ship to Spain and Portugal. " * 10)
    sources.save(ctx, rt.store, "plans/pro", title="Pro plan", content="The Pro plan costs 19.90 EUR a month.")
    sources.set_folder_description(ctx, rt.store, "policies", "Store policies")
    rt.index.train(ctx)
    return ctx


def test_browse_root_lists_one_level_without_content(tree, rt):
    result = rt.knowledge.browse(tree, "")
    assert [(c["name"], c["kind"]) for c in result.children] == [("plans", "folder"), ("policies", "folder")]
    policies = result.children[1]
    assert policies["description"] == "Store policies" and policies["documents"] == 3
    assert policies["weight"] == sum(len(s.content) for s in sources.list_sources(tree, rt.store, "policies"))
    assert not result.text_bearing and "30 days" not in json.dumps(result.as_dict())


def test_browse_folder_shows_documents_with_descriptions(tree, rt):
    result = rt.knowledge.browse(tree, "policies/returns")
    assert [(c["path"], c["kind"], c["description"]) for c in result.children] == [
        ("policies/returns/deadline", "document", "How long customers have"),
        ("policies/returns/refunds", "document", ""),
    ]


def test_read_document_returns_text_and_chunk_ids(tree, rt):
    result = rt.knowledge.read(tree, "policies/returns/deadline")
    assert result.found and result.text_bearing and result.kind == "document"
    [doc] = result.documents
    assert doc["text"] == "You have 30 days to return an item."
    assert result.chunk_ids == [
        c.id for c in rt.index.chunks_of(tree, sources.get(tree, rt.store, "policies/returns/deadline").id)]


def test_read_folder_respects_the_limit_and_indexes_the_rest(tree, rt):
    result = rt.knowledge.read(tree, "policies", limit=100)
    assert [d["path"] for d in result.documents] == ["policies/returns/deadline", "policies/returns/refunds"]
    assert [o["path"] for o in result.omitted] == ["policies/shipping"]
    assert "policies/shipping" in result.message


def test_read_returns_trained_text_not_unsaved_edits(tree, rt):
    sources.save(tree, rt.store, "plans/pro", title="Pro plan", content="The Pro plan costs 24.90 EUR a month.")
    assert "19.90" in rt.knowledge.read(tree, "plans/pro").documents[0]["text"]


def test_untrained_document_is_not_text(tree, rt):
    sources.save(tree, rt.store, "plans/new", title="New", content="Brand new plan.")
    result = rt.knowledge.read(tree, "plans/new")
    assert result.found and not result.text_bearing and result.omitted[0]["why"] == "not trained yet"


@pytest.mark.parametrize("verb", ["browse", "read"])
def test_wrong_path_suggests_existing_paths_closest_first(tree, rt, verb):
    result = getattr(rt.knowledge, verb)(tree, "policies/retuns")
    assert not result.found and result.kind == "missing"
    assert result.suggestions[0] == "policies/returns"
    assert set(result.suggestions) == {"policies/returns", "policies/shipping"}
    assert "Nothing at 'policies/retuns'" in result.message


def test_wrong_top_level_path(tree, rt):
    result = rt.knowledge.read(tree, "plnas")
    assert result.suggestions[0] == "plans"


def test_every_call_is_logged_even_when_nothing_was_found(tree, rt):
    rt.knowledge.browse(tree, "")
    rt.knowledge.read(tree, "policies/returns/refunds")
    rt.knowledge.read(tree, "nowhere")
    log = rt.knowledge.log(tree)
    assert [(r["verb"], r["path"], r["found"]) for r in log] == [
        ("read", "nowhere", 0), ("read", "policies/returns/refunds", 1), ("browse", "", 1)]
    assert json.loads(log[1]["returned_ids"]) and json.loads(log[0]["returned_ids"]) == []


def test_browse_of_a_document_points_to_read(tree, rt):
    result = rt.knowledge.browse(tree, "plans/pro")
    assert result.found and result.kind == "document" and "read it" in result.message
