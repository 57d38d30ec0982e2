import pytest

from core.knowledge import sources
from core.knowledge.sources import SourceError, normalize_path


@pytest.mark.parametrize("raw, expected", [
    ("policies/returns", "policies/returns"),
    ("/Políticas//Devoluciones/", "politicas/devoluciones"),
    ("a b/C&D", "a-b/c-d"),
    ("./faq\\envíos", "faq/envios"),
])
def test_normalize_path(raw, expected):
    assert normalize_path(raw) == expected


@pytest.mark.parametrize("raw", ["", "/", "  ", "../etc"])
def test_bad_paths(raw):
    with pytest.raises(SourceError):
        normalize_path(raw)


def test_create_edit_star_and_hash(ctx, rt):
    s = sources.save(ctx, rt.store, "policies/returns", title="Returns", content="30 days to return.")
    assert s.type == "text" and s.language == "en" and s.changed and not s.starred
    same = sources.save(ctx, rt.store, "policies/returns", title="Returns", content="30 days to return.")
    assert same.content_hash == s.content_hash
    edited = sources.save(ctx, rt.store, "policies/returns", title="Returns", content="45 days to return.")
    assert edited.content_hash != s.content_hash
    starred = sources.set_starred(ctx, rt.store, "policies/returns")
    assert starred.starred and starred.content_hash == edited.content_hash  # a star is not a content change


def test_create_refuses_duplicates_when_asked(ctx, rt):
    sources.save(ctx, rt.store, "a/b", title="B", content="text")
    with pytest.raises(SourceError, match="already exists"):
        sources.save(ctx, rt.store, "a/b", title="B", content="text", replace=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"title": "", "content": "x"}, "needs a title"),
    ({"title": "T", "content": "   "}, "no content"),
    ({"title": "T", "content": "x", "type": "video"}, "not known"),
])
def test_validation_messages(ctx, rt, kwargs, message):
    with pytest.raises(SourceError, match=message):
        sources.save(ctx, rt.store, "x/y", **kwargs)


def test_source_and_folder_cannot_collide(ctx, rt):
    sources.save(ctx, rt.store, "plans/pro", title="Pro", content="Pro plan")
    with pytest.raises(SourceError, match="is a source, not a folder"):
        sources.save(ctx, rt.store, "plans/pro/price", title="Price", content="10")
    with pytest.raises(SourceError, match="is a folder"):
        sources.save(ctx, rt.store, "plans", title="Plans", content="all")


def test_move_folder_and_delete(ctx, rt):
    sources.save(ctx, rt.store, "old/a", title="A", content="alpha")
    sources.save(ctx, rt.store, "old/sub/b", title="B", content="beta")
    sources.set_folder_description(ctx, rt.store, "old", "Old things")
    moved = sources.move(ctx, rt.store, "old", "new/place")
    assert [s.path for s in moved] == ["new/place/a", "new/place/sub/b"]
    assert sources.folder_descriptions(ctx, rt.store) == {"new/place": "Old things"}
    with pytest.raises(SourceError, match="into itself"):
        sources.move(ctx, rt.store, "new", "new/deeper")
    assert len(sources.delete(ctx, rt.store, "new/place")) == 2
    assert sources.list_sources(ctx, rt.store) == []
    with pytest.raises(SourceError, match="No source or folder"):
        sources.delete(ctx, rt.store, "new/place")


def test_move_refuses_to_overwrite(ctx, rt):
    sources.save(ctx, rt.store, "a/x", title="X", content="one")
    sources.save(ctx, rt.store, "b/x", title="X", content="two")
    with pytest.raises(SourceError, match="already exists"):
        sources.move(ctx, rt.store, "a", "b")
    assert sources.get(ctx, rt.store, "a/x").content == "one"  # nothing moved


def test_list_prefix_does_not_match_siblings(ctx, rt):
    sources.save(ctx, rt.store, "plan/a", title="A", content="a")
    sources.save(ctx, rt.store, "plans/b", title="B", content="b")
    assert [s.path for s in sources.list_sources(ctx, rt.store, "plan")] == ["plan/a"]


def test_an_empty_description_clears_it_and_none_keeps_it(ctx, rt):
    sources.save(ctx, rt.store, "faq/a", title="A", content="Texto.", description="Vieja")
    assert sources.save(ctx, rt.store, "faq/a", title="A", content="Texto.").description == "Vieja"
    assert sources.save(ctx, rt.store, "faq/a", title="A", content="Texto.", description="").description == ""
