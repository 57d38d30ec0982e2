"""Sources (K1-K3): the knowledge tree of a tenant, and for editors everything that changes it.

The tree (folders with their descriptions; sources with type, star, language, "changed since training"),
a filter, and for the chosen source: an edit form that shows the impact of the edit before it is saved
(the recent answers, closed gaps and QA cases that cited the chunks it replaces), star/unstar (on the
next answer), move and delete (with the same impact list and a confirmation), and a preview of exactly
the extracted text and how it is chunked. Editors also create sources (text or Q&A), upload files, a
folder or a .zip, paste HTML, fetch a URL, and train with a progress bar. A QA user sees the tree and
the previews only: no widget that changes anything is drawn for them.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.base.language import DETECTABLE, fold
from core.curation import relocation
from core.curation.impact import impact
from core.knowledge import sources
from core.knowledge.sources import Source, SourceError
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import common, placeholders, source_feedback, table_layout, training, uploads
from pages.add_sources import add_tab, report_messages
from pages.display import md, stamp
from pages.source_actions import SELECTED, flash, guarded, select, show_flash
from pages.source_preview import chunks_tab, impact_box

FILTER = "src_filter"
STATUS_CSS = {"changed since training": "color: #e37400", "never trained": "color: #d93025",
              "trained": "color: #188038"}


def status_of(source: Source) -> str:
    if source.trained_at is None:
        return "never trained"
    return "changed since training" if source.changed else "trained"


# -- header: training ---------------------------------------------------------------------------------------
def trained(job, done: training.Trained) -> None:
    """A training's outcome on this page (wherever it was started)."""
    report = done.report
    if report is None:
        return
    parts = [f"{len(report.trained)} source(s) trained into {report.chunks} chunk(s)",
             f"{report.embedded} passage(s) embedded"]
    if report.removed_sources:
        parts.append(f"{report.removed_sources} deleted source(s) removed from the indexes")
    if report.pending:
        parts.append(f"{report.pending} still pending (interrupted: train again)")
    if report.variant_groups:
        parts.append(f"{report.variant_groups} Q&A answer(s) with 3 or more phrasings learned as question variants")
    if report.trained or report.removed_sources:
        st.success(f"Trained in {report.seconds:.1f} s: " + ", ".join(parts) + ". The agent answers from it now.")
    else:
        st.info("Nothing changed since the last training.")


def header(rt: Runtime, ctx: TenantContext, editor: bool) -> None:
    st.title("Sources")
    intro, action = st.columns([5, 1], vertical_alignment="bottom")
    intro.caption("The knowledge the agent answers from. Content edits reach answers after training; starring, "
                  "un-starring and deleting act on the next answer." + ("" if editor else
                  f" You have the **{ctx.role}** role here: read only."))
    pending = rt.index.status(ctx)["changed"]
    if editor:
        action.button("Train", icon=":material/model_training:", key="src_train", width="stretch",
                      type="primary" if pending else "secondary", disabled=training.running(ctx) is not None,
                      help="Index what changed since the last training (content hash), in the background.",
                      on_click=training.start, args=(rt, ctx, "sources"))
    training.watch(ctx, "sources", trained)
    status = rt.index.status(ctx)
    cols = st.columns(4)
    cols[0].metric("Sources", status["sources"], border=True)
    cols[1].metric("Changed since training", status["changed"], border=True,
                   help="Edited, moved or new sources whose current text the agent does not see yet.")
    cols[2].metric("Chunks", status["chunks"], border=True)
    cols[3].metric("Vectors / keyword docs", f"{status['vectors']} / {status['keyword_docs']}", border=True)


# -- the tree -------------------------------------------------------------------------------------------------
def tree_rows(items: list[Source], descriptions: dict[str, str], query: str) -> list[dict]:
    """Folders (implied by paths) and sources in tree order; with a query, the matches and their folders."""
    wanted = fold(query.strip())

    def hit(*texts: str) -> bool:
        return not wanted or any(wanted in fold(t or "") for t in texts)

    folders: dict[str, list[Source]] = {}
    for source in items:
        parts = source.path.split("/")
        for i in range(1, len(parts)):
            folders.setdefault("/".join(parts[:i]), []).append(source)
    matched = {f for f in folders if wanted and hit(f, descriptions.get(f, ""))}  # a matching folder shows all below it
    kept_paths = ({s.path for s in items if hit(s.path, s.title, s.description)}
                  | {s.path for f in matched for s in folders[f]})
    shown_folders = set()
    for path in kept_paths | matched:
        parts = path.split("/")
        shown_folders |= {"/".join(parts[:i]) for i in range(1, len(parts))}
    shown_folders |= matched
    rows = []
    for folder in shown_folders:
        below = folders[folder]
        changed = sum(1 for s in below if s.changed)
        rows.append({"path": folder, "kind": "folder", "depth": folder.count("/"), "name": folder.rsplit("/", 1)[-1],
                     "title": descriptions.get(folder, ""), "type": "folder", "star": "", "language": "",
                     "status": f"{changed} changed" if changed else "", "chars": sum(len(s.content) for s in below),
                     "sources": len(below)})
    for source in items:
        if source.path in kept_paths:
            rows.append({"path": source.path, "kind": "source", "depth": source.path.count("/"), "name": source.name,
                         "title": source.title, "type": source.type, "star": "★" if source.starred else "",
                         "language": source.language, "status": status_of(source), "chars": len(source.content),
                         "sources": 1})
    # tree order: a folder right before its contents ('/' sorts as the lowest character)
    return sorted(rows, key=lambda r: r["path"].replace("/", "\x00"))


def _pick_row() -> None:
    rows = st.session_state[st.session_state["_src_table_key"]].selection.rows
    if rows:
        st.session_state[SELECTED] = st.session_state["_src_table_paths"][rows[0]]


def _picked_in_box() -> None:
    st.session_state["_src_table_nonce"] = st.session_state.get("_src_table_nonce", 0) + 1


def tree(rows: list[dict]) -> None:
    frame = pd.DataFrame({
        "Tree": ["\u2003" * r["depth"] + ("📁 " if r["kind"] == "folder" else "📄 ") + r["name"] for r in rows],
        "Title / folder description": [r["title"] for r in rows],
        "Type": [r["type"] for r in rows],
        "★": [r["star"] for r in rows],
        "Lang": [r["language"] for r in rows],
        "Status": [r["status"] for r in rows],
        "Answers": [r.get("answers", "") for r in rows],
        "Chars": [r["chars"] for r in rows],
    })
    key = f"src_table_{st.session_state.get('_src_table_nonce', 0)}"
    st.session_state["_src_table_key"] = key
    st.session_state["_src_table_paths"] = [r["path"] for r in rows]
    st.dataframe(
        frame.style.map(lambda s: STATUS_CSS.get(s, "color: #e37400" if s else ""), subset=["Status"]),
        hide_index=True, key=key, on_select=_pick_row, selection_mode="single-row",
        height=min(38 + 35 * len(rows), 420), column_order=table_layout.SOURCE_ORDER,  # fits 1,400 px
        column_config={
            **table_layout.SOURCE_COLUMNS,
            "Answers": st.column_config.TextColumn(width=table_layout.SOURCE_ANSWERS_WIDTH, help=source_feedback.HELP),
        },
    )


# -- the chosen source -----------------------------------------------------------------------------------------
FIELDS = ("title", "description", "language", "url", "content")


def _keys(source: Source) -> dict[str, str]:
    return {f: f"src_{source.id}_{f}" for f in FIELDS}


def _snapshot(source: Source) -> dict[str, str]:
    return {f: getattr(source, f) for f in FIELDS}


def _load(source: Source) -> None:
    """Fill the form with the stored source, and remember what it was loaded from."""
    for field, key in _keys(source).items():
        st.session_state[key] = getattr(source, field)
    st.session_state[f"src_{source.id}_base"] = _snapshot(source)


def _save(rt: Runtime, ctx: TenantContext, path: str) -> None:
    source = sources.get(ctx, rt.store, path)
    if source is None:
        raise SourceError(f"'{path}' was deleted meanwhile; nothing was saved.")
    values = {f: st.session_state[k] for f, k in _keys(source).items()}
    saved = sources.save(ctx, rt.store, source.path, type=source.type, **values)
    _load(saved)
    flash("success", f"Saved `{saved.path}`." + (" Train to make the new text answerable." if saved.changed else ""))


def edit_tab(rt: Runtime, ctx: TenantContext, source: Source) -> None:
    keys = _keys(source)
    base_key = f"src_{source.id}_base"
    if any(k not in st.session_state for k in [*keys.values(), base_key]):
        _load(source)
    elif st.session_state[base_key] != _snapshot(source):  # saved elsewhere (another editor, an import, the gaps page)
        if {f: st.session_state[k] for f, k in keys.items()} == st.session_state[base_key]:
            _load(source)  # nothing typed here: show the stored version
        else:
            st.warning("This source was changed elsewhere since you started editing it: saving overwrites that "
                       "version. **Discard changes** to start again from the stored one.",
                       icon=":material/sync_problem:")
    qa = source.type == "qa"
    left, right = st.columns([3, 1])
    left.text_input("Question" if qa else "Title", key=keys["title"])
    languages = ["", *sorted(set(DETECTABLE) | {source.language} - {""})]
    right.selectbox("Language", languages, key=keys["language"], format_func=lambda c: c or "detect")
    st.text_input("Description", key=keys["description"], help="Shown by the agent's browse verb next to the name.")
    st.text_input("URL (optional)", key=keys["url"], help="Cited with the answer when set.")
    if source.type in ("text", "qa"):
        st.text_area("Answer" if qa else "Content", key=keys["content"], height=280)
    else:
        st.caption(f"The text of a {source.type} source is what was extracted from "
                   f"{md(source.origin or source.url or 'its file')}; import it again to change it "
                   "(see the chunks tab).")
    proposed = {f: st.session_state[k] for f, k in keys.items()}
    if all(str(proposed[f]).strip() == str(getattr(source, f)).strip() for f in FIELDS):
        st.caption("No unsaved changes.")
        return
    st.markdown("##### Before you save: impact of this edit")
    if source.changed and source.trained_at:
        st.caption("Compared with the trained version, so it includes the changes saved earlier and not trained yet.")
    impact_box(impact(ctx, rt, source.path, proposed=proposed), "edit", proposed=True)
    buttons = st.container(horizontal=True)
    buttons.button("Save", icon=":material/save:", type="primary", key=f"save_{source.id}",
                   on_click=guarded(_save), args=(rt, ctx, source.path))
    buttons.button("Discard changes", key=f"discard_{source.id}", on_click=_load, args=(source,))


def _move(rt: Runtime, ctx: TenantContext, path: str, key: str) -> None:
    moved = relocation.move(ctx, rt, path, st.session_state.get(key, ""))
    new = sources.normalize_path(st.session_state[key])
    st.session_state.pop(key, None)
    select(new)
    follow = (f" {moved.gaps} closed gap(s) and {moved.qa_cases} QA case(s) now point at the new path."
              if moved.gaps or moved.qa_cases else "")
    flash("success", f"Moved {len(moved.sources)} source(s) to `{new}`.{follow} "
                     "Train to make the agent cite the new path.")


def _delete(rt: Runtime, ctx: TenantContext, path: str) -> None:
    ids = sources.delete(ctx, rt.store, path)
    rt.index.forget(ctx, ids)
    select(None)
    flash("success", f"Deleted `{path}` ({len(ids)} source(s)): gone from answers now.")


def move_delete(rt: Runtime, ctx: TenantContext, path: str, what: str) -> None:
    st.markdown(f"##### Impact of moving or deleting this {what}")
    impact_box(impact(ctx, rt, path), f"Moving or deleting this {what}")
    move, delete = st.columns(2, gap="large")
    with move:
        key = f"move_to_{path}"
        st.text_input("Move to (new path)", key=key, placeholder=path)
        st.button("Move", icon=":material/drive_file_move:", key=f"move_{path}", on_click=guarded(_move),
                  args=(rt, ctx, path, key))
    with delete:
        confirm = st.checkbox(f"Yes, delete `{path}`" + (" and everything below it" if what == "folder" else ""),
                              key=f"confirm_delete_{path}")
        st.button("Delete", icon=":material/delete:", key=f"delete_{path}", disabled=not confirm,
                  on_click=guarded(_delete), args=(rt, ctx, path))


def _star(rt: Runtime, ctx: TenantContext, path: str, key: str) -> None:
    source = sources.set_starred(ctx, rt.store, path, bool(st.session_state[key]))
    flash("success", f"`{source.path}` {'starred' if source.starred else 'un-starred'}: effective on the next answer, "
                     "no training needed.")


def source_detail(rt: Runtime, ctx: TenantContext, source: Source, editor: bool) -> None:
    head, star = st.columns([5, 1], vertical_alignment="center")
    badges = [f":blue-badge[{source.type}]", f":gray-badge[{source.language or '?'}]",
              {"trained": ":green-badge[trained]", "never trained": ":red-badge[never trained]"}.get(
                  status_of(source), ":orange-badge[changed since training]")]
    if source.starred:
        badges.insert(0, ":orange-badge[:material/star: starred]")
    head.subheader(f"📄 {md(source.title)}", anchor=False)
    head.markdown(" ".join(badges) + f"  `{source.path}`")
    facts = [f"updated {stamp(source.updated_at)}", f"trained {stamp(source.trained_at)}",
             source_feedback.sentence(rt, ctx, source.path)]
    if source.origin:
        facts.append(f"from {md(source.origin)}")
    if source.url:
        facts.append(f"url {md(source.url)}")
    if source.description:
        facts.insert(0, md(source.description))
    head.caption(" · ".join(facts))
    if editor:
        key = f"star_{source.id}"
        st.session_state[key] = source.starred
        star.toggle("Starred", key=key, on_change=guarded(_star), args=(rt, ctx, source.path, key),
                    help="Starred sources win near-ties in retrieval; effective on the next answer.")
        tabs = st.tabs(["Edit", "Extracted text and chunks", "Move or delete"])
        with tabs[0]:
            edit_tab(rt, ctx, source)
        with tabs[1]:
            chunks_tab(rt, ctx, source)
        with tabs[2]:
            move_delete(rt, ctx, source.path, "source")
    else:
        chunks_tab(rt, ctx, source)


def _describe(rt: Runtime, ctx: TenantContext, path: str, key: str) -> None:
    sources.set_folder_description(ctx, rt.store, path, st.session_state.get(key, ""))
    flash("success", f"Description of `{path}` saved: browse shows it at once.")


def folder_detail(rt: Runtime, ctx: TenantContext, path: str, editor: bool) -> None:
    below = sources.list_sources(ctx, rt.store, path)
    description = sources.folder_descriptions(ctx, rt.store).get(path, "")
    st.subheader(f"📁 {md(path)}", anchor=False)
    changed = sum(1 for s in below if s.changed)
    st.caption(f"{len(below)} source(s) below, {changed} changed since training; "
               f"{source_feedback.sentence(rt, ctx, path, folder=True)}."
               + (f" {md(description)}" if description and not editor else ""))
    if not editor:
        return
    key = f"folder_description_{path}"
    st.session_state.setdefault(key, description)
    row = st.columns([5, 1], vertical_alignment="bottom")
    row[0].text_input("Folder description", key=key, help="The agent's browse verb shows it next to the folder name.")
    row[1].button("Save description", key=f"describe_{path}", on_click=guarded(_describe), args=(rt, ctx, path, key),
                  width="stretch")
    move_delete(rt, ctx, path, "folder")


def tree_tab(rt: Runtime, ctx: TenantContext, editor: bool) -> None:
    items = sources.list_sources(ctx, rt.store)
    if not items:
        st.info("No sources yet." + (" Add some in **Add sources**: write one, upload files or a folder, paste HTML "
                                      "or fetch a page." if editor else ""), icon=":material/inbox:")
        return
    query = st.text_input("Filter", key=FILTER, placeholder="Filter by path, title or description",
                          label_visibility="collapsed")
    rows = tree_rows(items, sources.folder_descriptions(ctx, rt.store), query)
    if not rows:
        st.info("Nothing matches this filter.")
        return
    source_feedback.annotate(rt, ctx, rows)  # "12 · 3 unhelpful": answers citing it, and the 👎 among them
    tree(rows)
    by_path = {r["path"]: r for r in rows}
    if st.session_state.get(SELECTED) not in by_path:
        st.session_state[SELECTED] = next((r["path"] for r in rows if r["kind"] == "source"), rows[0]["path"])
    st.selectbox("Source or folder", list(by_path), key=SELECTED, on_change=_picked_in_box,
                 format_func=lambda p: ("📁 " if by_path[p]["kind"] == "folder" else "📄 ") + p
                 + (f" — {by_path[p]['title']}" if by_path[p]["title"] else ""),
                 help="Or click a row of the tree.")
    chosen = st.session_state[SELECTED]
    with st.container(border=True):
        source = sources.get(ctx, rt.store, chosen) if by_path[chosen]["kind"] == "source" else None
        if source is not None:
            source_detail(rt, ctx, source, editor)
        else:
            folder_detail(rt, ctx, chosen, editor)


def search_tab(rt: Runtime, ctx: TenantContext) -> None:
    query = st.text_input("Question", placeholder=placeholders.question(rt, ctx), key="src_search")
    if not query:
        st.caption("What retrieval selects for a question, with its scores: "
                   "the trained knowledge, as the agent sees it.")
        return
    result = rt.retriever.search(ctx, query)
    st.caption(f"Rewritten: {md(result.rewritten)} · language {result.language} · {result.seconds * 1000:.0f} ms")
    for n, hit in enumerate(result.hits, start=1):
        with st.expander(f"{n}. {hit.path} — {hit.title} ({hit.type}, score {hit.score:.3f})", expanded=n == 1):
            st.caption(f"similarity {hit.similarity:.3f} · bm25 {hit.bm25:.2f} · found by {hit.found_by} · "
                       f"{md(hit.reason)}")
            st.text(hit.text)
    if not result.hits:
        st.warning("No chunk supports this question well enough: the agent would abstain.")


def main() -> None:
    rt = common.runtime()
    ctx = common.page_context(rt)
    editor = ctx.can("editor")
    header(rt, ctx, editor)
    uploads.watch(ctx, lambda report: report_messages(report, "Upload"))  # before the messages and the tree
    show_flash()
    names = ["Tree", "Add sources", "Try a search"] if editor else ["Tree", "Try a search"]
    tabs = dict(zip(names, st.tabs(names)))
    with tabs["Tree"]:
        tree_tab(rt, ctx, editor)
    if editor:
        with tabs["Add sources"]:
            add_tab(rt, ctx)
    with tabs["Try a search"]:
        search_tab(rt, ctx)


main()
