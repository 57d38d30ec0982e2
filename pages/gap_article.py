"""Closing a gap with an article (G3): write one (a template prefilled with the gap's samples, or an
LLM draft when a provider is configured) or pick an existing one, publish and train, replay the gap's
stored samples against the trained knowledge, and close once the check is convincing.

Used by the gap backlog page (``pages/gaps.py``), one gap at a time.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.base.errors import UserError
from core.gaps.backlog import Gap
from core.gaps.drafting import draft_article, skeleton
from core.gaps.model import NOT_HELPFUL
from core.gaps.replay import replay_gap
from core.knowledge import sources
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import gap_feedback, training
from pages.display import md
from pages.gap_actions import flash, guarded

PLACEHOLDER = "[[FALTA"


@st.cache_resource(show_spinner=False)
def llm_provider(_rt: Runtime, chain: tuple[str, ...]):
    from core.agent.providers.chain import build_provider

    return build_provider(_rt.settings)


def _draft_keys(gap_id: int) -> dict[str, str]:
    return {f: f"article_{f}_{gap_id}" for f in ("path", "title", "content", "by")}


def _fill(gap_id: int, draft: dict, by: str) -> None:
    keys = _draft_keys(gap_id)
    for field in ("path", "title", "content"):
        st.session_state[keys[field]] = draft[field] or ""
    st.session_state[keys["by"]] = by


def _llm_draft(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    provider = llm_provider(rt, rt.settings.provider_chain)
    draft = draft_article(ctx, rt, gap_id, provider)
    _fill(gap_id, draft, draft["drafted_by"])
    if draft["drafted_by"] == "template":
        flash("warning", "The model did not answer (or no sample is left to draft from): the template stays.")


def _save_draft(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    keys = _draft_keys(gap_id)
    rt.backlog.save_draft(ctx, gap_id, st.session_state[keys["path"]], st.session_state[keys["title"]],
                          st.session_state[keys["content"]])
    st.session_state[keys["by"]] = "saved draft"
    flash("success", f"Draft of gap #{gap_id} saved (not published: the agent does not see it yet).")


def _keep_draft(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    """Every edit is kept with the gap at once: switching gaps or reloading the page loses nothing."""
    keys = _draft_keys(gap_id)
    rt.backlog.save_draft(ctx, gap_id, *(st.session_state.get(keys[f], "") for f in ("path", "title", "content")))


def write_tab(rt: Runtime, ctx: TenantContext, gap: Gap) -> None:
    if gap.status == "closed":
        st.info(f"Closed with `{gap.article_path}`. Reopen the gap to write another article for it.")
        return
    keys = _draft_keys(gap.id)
    if keys["content"] not in st.session_state:
        saved = rt.backlog.draft(ctx, gap.id)
        if saved:
            _fill(gap.id, saved, "saved draft")
        else:
            _fill(gap.id, draft_article(ctx, rt, gap.id), "template")
    chain = rt.settings.provider_chain
    top = st.columns([3, 1], vertical_alignment="center")
    by = st.session_state[keys["by"]]
    top[0].caption(f"Drafted by **{md(by)}**. "
                   + ("" if chain else
                      "No LLM configured (COBERTURA_PROVIDER): the draft lists the customers' questions. ")
                   + "Write the facts yourself; the agent will only say what the article says.")
    if chain:
        top[1].button(f"Draft with {', '.join(chain)}", icon=":material/auto_awesome:", key=f"llm_{gap.id}",
                      on_click=guarded(_llm_draft), args=(rt, ctx, gap.id), width="stretch")
    left, right = st.columns([1, 2])
    keep = {"on_change": guarded(_keep_draft), "args": (rt, ctx, gap.id)}
    path = left.text_input("Path in the knowledge tree", key=keys["path"], **keep)
    title = right.text_input("Title", key=keys["title"], **keep)
    content = st.text_area("Article", key=keys["content"], height=260, **keep,
                           help="Kept with the gap as a draft as you edit; the agent sees it only once published.")
    existing = sources.get(ctx, rt.store, sources.normalize_path(path)) if path.strip() else None
    if existing is not None:
        st.warning(f"A source already exists at `{existing.path}` (“{md(existing.title)}”): "
                   "publishing replaces its text.")
    if PLACEHOLDER in content:
        st.warning("The article still has [[FALTA: …]] placeholders: "
                   "replace each with the real fact before publishing.")
    buttons = st.container(horizontal=True)
    buttons.button("Save draft", icon=":material/save:", key=f"save_{gap.id}", on_click=guarded(_save_draft),
                   args=(rt, ctx, gap.id))
    publish = buttons.button("Publish, train and check", icon=":material/publish:", type="primary",
                             key=f"publish_{gap.id}")
    if publish:
        samples = [s["sample"] for s in rt.backlog.samples(ctx, gap.id) if s["sample"]]
        if PLACEHOLDER in content:
            st.error("Not published: the article still has [[FALTA: …]] placeholders. Write those facts first.")
        elif not content.strip() or content.strip() == skeleton(gap, samples).strip():
            st.error("Not published: the article has no answer yet. Write it under the customers' questions.")
        else:
            try:
                rt.backlog.save_draft(ctx, gap.id, path, title, content)
                source = sources.save(ctx, rt.store, path, title=title, content=content)
                check(rt, ctx, gap, source.path, "write")
            except UserError as exc:
                st.error(str(exc))
    show_check(rt, ctx, gap, "write")


def trained(job, done: training.Trained) -> None:
    """A training's outcome here (wherever it was started); a check's replay is kept for the confirm button."""
    report = done.report
    if report is not None and report.trained:
        st.caption(f"Trained {len(report.trained)} source(s) in {report.seconds:.1f} s.")
    elif report is not None:
        st.caption("The knowledge was already trained: nothing changed since the last training.")
    if done.after is not None:
        st.session_state[f"check_{job.meta['gap']}"] = done.after


def check(rt: Runtime, ctx: TenantContext, gap: Gap, article: str, origin: str) -> None:
    """Train what changed, then replay the gap's samples, in the background; the result waits for the confirm
    button (see show_check)."""
    def replay(report) -> dict:
        report(1.0, f"Trained; asking the stored samples of gap #{gap.id} again…")
        return {"article": article, "rows": replay_gap(ctx, rt, gap.id, article), "origin": origin}
    training.start(rt, ctx, f"gap:{gap.id}:{origin}", then=replay, gap=gap.id)


def _close(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    done = st.session_state.pop(f"check_{gap_id}")
    gap = rt.backlog.close(ctx, gap_id, done["article"], replay=done["rows"])
    again = "its answer is marked unhelpful again" if gap.kind == NOT_HELPFUL else "it is asked again uncovered"
    flash("success", f"Gap #{gap.id} closed with `{gap.article_path}`. If {again}, it reopens.")


def _discard(gap_id: int) -> None:
    st.session_state.pop(f"check_{gap_id}", None)


def answered_check(gap: Gap, rows: list[dict], article: str, origin: str) -> bool:
    """The replay of an uncovered gap: which samples are answered now, and cite the article. True when all are."""
    answered = sum(1 for r in rows if r["answered"])
    cites = sum(1 for r in rows if r["cites_article"])
    st.markdown(f"##### Check of `{article}`: {answered} of {len(rows)} stored sample(s) answered, {cites} citing it")
    if rows:
        frame = pd.DataFrame({
            "Answered": ["✓" if r["answered"] else "✗" for r in rows],
            "Cites the article": ["✓" if r["cites_article"] else "✗" for r in rows],
            "Question (masked)": [r["sample"] for r in rows],
            "Answer": [r["answer"] or "(the agent would abstain)" for r in rows],
            "Cited": [", ".join(r["citations"]) for r in rows],
        })
        mark = {"✓": "color: #188038; font-weight: bold", "✗": "color: #d93025; font-weight: bold"}
        st.dataframe(frame.style.map(lambda v: mark.get(v, ""), subset=["Answered", "Cites the article"]),
                     hide_index=True, key=f"check_table_{gap.id}_{origin}",
                     column_config={"Question (masked)": st.column_config.TextColumn(width="medium"),
                                    "Answer": st.column_config.TextColumn(width="large")})
    if not rows:
        st.info("Every sample of this gap was purged by retention: there is nothing to replay.")
    elif answered < len(rows):
        st.warning(f"**{len(rows) - answered} of {len(rows)} sample(s) are still not answered** with this article. "
                   "Closing now is allowed, but when one of these questions comes again uncovered the gap reopens. "
                   "Consider completing the article first.")
    elif cites < len(rows):
        st.info("Every sample is answered, but not every answer cites this article: other sources answered those. "
                "If they are a different question, move them to their own gap (Merge or split).")
    else:
        st.success("Every stored sample is answered and cites the article.")
    return bool(rows) and answered == len(rows)


def show_check(rt: Runtime, ctx: TenantContext, gap: Gap, origin: str) -> None:
    if training.watch(ctx, f"gap:{gap.id}:{origin}", trained) is not None:
        return  # the check's result comes once the training (and the replay) has ended
    done = st.session_state.get(f"check_{gap.id}")
    if not done or done["origin"] != origin:
        return
    rows, article = done["rows"], done["article"]
    if gap.kind == NOT_HELPFUL:  # an answer marked unhelpful: the check is that the answer changed
        ready = gap_feedback.changed_check(gap, rows, article)
    else:
        ready = answered_check(gap, rows, article, origin)
    buttons = st.container(horizontal=True)
    buttons.button("Close gap with this article", icon=":material/task_alt:", type="primary" if ready else "secondary",
                   key=f"close_{gap.id}_{origin}", on_click=guarded(_close), args=(rt, ctx, gap.id),
                   disabled=not gap_feedback.closable(gap, rows))
    buttons.button("Discard the check", key=f"discard_{gap.id}_{origin}", on_click=_discard, args=(gap.id,))


def existing_tab(rt: Runtime, ctx: TenantContext, gap: Gap) -> None:
    if gap.status == "closed":
        st.info(f"Closed with `{gap.article_path}`. Reopen the gap to close it with another article.")
        return
    items = sources.list_sources(ctx, rt.store)
    if not items:
        st.info("This tenant has no sources yet.")
        return
    titles = {s.path: s.title for s in items}
    st.caption("When the answer is already in the knowledge (or you just edited a source), close the gap with it. "
               "The stored samples are asked again first; a changed source is trained before.")
    row = st.columns([3, 1], vertical_alignment="bottom")
    chosen = row[0].selectbox("Existing article", list(titles), index=None, key=f"existing_{gap.id}",
                              format_func=lambda p: f"{p} — {titles[p]}",
                              placeholder="Choose the source that answers this gap")
    if row[1].button("Check this article", icon=":material/fact_check:", key=f"check_existing_{gap.id}",
                     disabled=chosen is None, width="stretch"):
        try:
            check(rt, ctx, gap, chosen, "existing")
        except UserError as exc:
            st.error(str(exc))
    show_check(rt, ctx, gap, "existing")
