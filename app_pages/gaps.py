"""Gap backlog: what the agent could not answer, merged and masked, until an article closes it.

The editorial loop of the product: pick the most asked gap, read its (masked) samples, write or pick
the article that answers it, publish and train, replay the stored samples against the new knowledge,
and close the gap once the check is convincing. Merge, split, rename, reopen and a CSV export too.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import streamlit as st

from core import handoff, sources
from core.agent.drafting import draft_article, skeleton
from core.agent.replay import replay_gap
from core.config import ConfigError
from core.gaps import Gap, GapError
from core.runtime import Runtime
from core.sources import SourceError
from core.tenancy import AuthError, TenantContext
from app_pages import common
from app_pages.display import ago, md, stamp

#: The errors of the backlog, the tree and the settings: their messages are written for the user.
USER_ERRORS = (GapError, AuthError, SourceError, ConfigError)
STATUS_FILTERS = {"To do (open + reopened)": None, "Open": "open", "Reopened": "reopened", "Closed": "closed", "All": None}
ORDERS = {"Most asked": "count", "Most recent": "recent"}
STATUSES = ("open", "reopened", "closed")
STATUS_COLOR = {"open": "red", "reopened": "orange", "closed": "green"}
STATUS_CSS = {"open": "color: #d93025", "reopened": "color: #e37400", "closed": "color: #188038"}
PLACEHOLDER = "[[FALTA"
FLASH = "gaps_flash"


# -- small formatting helpers -----------------------------------------------------------------------








_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


def guarded(action):
    """Run an editorial callback; a user error becomes a message on the page, never a traceback."""
    def run(*args):
        try:
            action(*args)
        except USER_ERRORS as exc:
            flash("error", str(exc))
    return run


@st.cache_resource(show_spinner=False)
def llm_provider(_rt: Runtime, chain: tuple[str, ...]):
    from core.agent.providers import build_provider

    return build_provider(_rt.settings)


# -- top of the page ----------------------------------------------------------------------------------
def metrics_and_trend(rt: Runtime, ctx: TenantContext, gaps: list[Gap]) -> None:
    rows = rt.backlog.trend(ctx, days=30)
    today = datetime.now(timezone.utc).date()
    per_day = pd.DataFrame(rows, columns=["day", "language", "channel", "questions"])
    per_day["day"] = pd.to_datetime(per_day["day"]).dt.date
    last7 = int(per_day.loc[per_day["day"] > today - timedelta(days=7), "questions"].sum())
    before7 = int(per_day.loc[(per_day["day"] <= today - timedelta(days=7)) & (per_day["day"] > today - timedelta(days=14)),
                              "questions"].sum())
    counts = {s: sum(1 for g in gaps if g.status == s) for s in STATUSES}
    cols = st.columns(5)
    cols[0].metric("Open", counts["open"], border=True, help="Gaps no article answers yet.")
    cols[1].metric("Reopened", counts["reopened"], border=True,
                   help="Closed with an article, then asked again and still not answered: the article fell short.")
    cols[2].metric("Closed", counts["closed"], border=True)
    cols[3].metric("Uncovered, 7 days", last7, delta=last7 - before7, delta_color="inverse", border=True,
                   delta_description="vs prior 7 days", help="Questions the agent could not answer.")
    cols[4].metric("Uncovered, 30 days", int(per_day["questions"].sum()), border=True)
    if per_day.empty:
        st.caption("No uncovered questions in the last 30 days.")
        return
    import plotly.express as px

    by_language = per_day.groupby(["day", "language"], as_index=False)["questions"].sum()
    by_language["day"] = pd.to_datetime(by_language["day"])
    fig = px.bar(by_language, x="day", y="questions", color="language", height=240,
                 labels={"day": "", "questions": "questions", "language": "language"},
                 category_orders={"language": sorted(by_language["language"].unique())})
    start = pd.Timestamp(today - timedelta(days=30))
    fig.update_xaxes(range=[start - pd.Timedelta(hours=12), pd.Timestamp(today) + pd.Timedelta(hours=12)],
                     tickformat="%d %b")
    fig.update_yaxes(rangemode="tozero", tick0=0, dtick=max(1, int(by_language.groupby("day")["questions"].sum().max() // 4)))
    fig.update_layout(margin=dict(l=0, r=0, t=30, b=0), bargap=0.15,
                      title=dict(text="Uncovered questions per day, last 30 days", font=dict(size=14)),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1, title=None))
    st.plotly_chart(fig, config={"displayModeBar": False})


def filters(gaps: list[Gap]) -> tuple[str, list[str], list[str], str]:
    languages = sorted({l for g in gaps for l in g.languages})
    channels = sorted({c for g in gaps for c in g.channels})
    cols = st.columns([2, 2, 2, 2, 1], vertical_alignment="bottom")
    status = cols[0].selectbox("Status", list(STATUS_FILTERS), key="gaps_status")
    chosen_languages = cols[1].multiselect("Language", languages, key="gaps_language", placeholder="All languages")
    chosen_channels = cols[2].multiselect("Channel", channels, key="gaps_channel", placeholder="All channels")
    order = cols[3].segmented_control("Order", list(ORDERS), default="Most asked", required=True, key="gaps_order")
    return status, chosen_languages, chosen_channels, order or "Most asked"


def keep(gap: Gap, status: str, languages: list[str], channels: list[str]) -> bool:
    if status.startswith("To do") and not gap.is_open:
        return False
    wanted = STATUS_FILTERS[status]
    if wanted and gap.status != wanted:
        return False
    if languages and not set(languages) & set(gap.languages):
        return False
    return not channels or bool(set(channels) & set(gap.channels))


def gap_option(gap: Gap) -> str:
    return f"#{gap.id} · {gap.label} ({gap.count}×, {gap.status})"


def _pick_row() -> None:
    """A click on a table row opens that gap below."""
    rows = st.session_state[st.session_state["_gaps_table_key"]].selection.rows
    if rows:
        st.session_state["gap_id"] = st.session_state["_gaps_table_ids"][rows[0]]


def _picked_in_box() -> None:
    st.session_state["_gaps_table_nonce"] = st.session_state.get("_gaps_table_nonce", 0) + 1  # clear the row highlight


def table(shown: list[Gap]) -> None:
    top = max(g.count for g in shown)
    frame = pd.DataFrame({
        "#": [g.id for g in shown],
        "Question": [g.label for g in shown],
        "Asked": [g.count for g in shown],
        "Status": [g.status for g in shown],
        "Languages": [", ".join(g.languages) for g in shown],
        "Channels": [", ".join(g.channels) for g in shown],
        "Last seen": pd.to_datetime([g.last_seen for g in shown], utc=True),
        "Article": [g.article_path or "" for g in shown],
    })
    key = f"gaps_table_{st.session_state.get('_gaps_table_nonce', 0)}"
    st.session_state["_gaps_table_key"] = key
    st.session_state["_gaps_table_ids"] = [g.id for g in shown]
    st.dataframe(
        frame.style.map(lambda status: STATUS_CSS.get(status, ""), subset=["Status"]),
        hide_index=True, key=key, on_select=_pick_row, selection_mode="single-row", height=min(38 + 35 * len(shown), 400),
        column_order=[c for c in frame.columns if c != "Article" or any(g.article_path for g in shown)],
        column_config={
            "#": st.column_config.NumberColumn(width=50, format="%d"),
            "Question": st.column_config.TextColumn(width=290, help="The gap's label (rename it below)"),
            "Languages": st.column_config.TextColumn(width="small"),
            "Channels": st.column_config.TextColumn(width=150),
            "Asked": st.column_config.ProgressColumn(min_value=0, max_value=top, format="%d×", width="small",
                                                     help="Questions merged into this gap, kept after samples are purged"),
            "Last seen": st.column_config.DatetimeColumn(format="distance"),
            "Article": st.column_config.TextColumn(width="medium", help="The article the gap was closed with"),
        },
    )


# -- the chosen gap -------------------------------------------------------------------------------------
def detail(rt: Runtime, ctx: TenantContext, gap: Gap, every_gap: list[Gap]) -> None:
    retention = rt.backlog.retention_days(ctx)
    with st.container(border=True):
        head, actions = st.columns([5, 2], vertical_alignment="top")
        with head:
            st.subheader(f"#{gap.id} · {md(gap.label)} :{STATUS_COLOR[gap.status]}-badge[{gap.status}]", anchor=False)
            facts = [f"asked **{gap.count}×**", f"first seen {stamp(gap.first_seen)}", f"last seen {ago(gap.last_seen)}",
                     f"languages {', '.join(gap.languages) or '—'}", f"channels {', '.join(gap.channels) or '—'}"]
            handed = handoff.by_gap(ctx, rt.store).get(gap.id)
            if handed:  # what this gap costs the team: conversations a person had to take over (see the Inbox)
                facts.append(f"handed to a person **{handed['total']}×** ({handed['open']} open in the Inbox)")
            if gap.status == "closed":
                facts.append(f"closed with `{gap.article_path}` by {md(gap.closed_by or '?')} {ago(gap.closed_at)}")
            elif gap.article_path:
                facts.append(f"the article `{gap.article_path}` did not answer it")
            st.caption(" · ".join(facts))
        with actions, st.container(horizontal=True, horizontal_alignment="right"):
            with st.popover("Rename", icon=":material/edit:"):
                key = f"label_{gap.id}"
                st.session_state.setdefault(key, gap.label)
                st.text_input("Label", key=key, help="A few words that name the question; kept when samples are purged.")
                st.button("Save label", key=f"rename_{gap.id}", on_click=guarded(_rename), args=(rt, ctx, gap.id))
            if gap.status == "closed":
                st.button("Reopen", icon=":material/undo:", key=f"reopen_{gap.id}", on_click=guarded(_reopen),
                          args=(rt, ctx, gap.id))
        show_flash()
        tabs = st.tabs(["Samples", "History", "Write article", "Close with an existing article", "Merge or split"])
        with tabs[0]:
            samples_tab(rt, ctx, gap, retention)
        with tabs[1]:
            history_tab(rt, ctx, gap)
        with tabs[2]:
            write_tab(rt, ctx, gap)
        with tabs[3]:
            existing_tab(rt, ctx, gap)
        with tabs[4]:
            merge_split_tab(rt, ctx, gap, every_gap)


def samples_tab(rt: Runtime, ctx: TenantContext, gap: Gap, retention: int) -> None:
    samples = rt.backlog.samples(ctx, gap.id)
    kept = sum(1 for s in samples if s["sample"])
    st.caption(f"{len(samples)} question(s), newest first; personal data is masked before anything is stored. "
               f"Samples are kept {retention} days, the counts and the label for ever. {kept} still kept.")
    purged = f"sample purged by retention ({retention} days)"
    st.dataframe(pd.DataFrame({
        "When": [stamp(s["at"]) for s in samples],
        "Language": [s["language"] for s in samples],
        "Channel": [s["channel"] for s in samples],
        "Question (masked)": [s["sample"] or purged for s in samples],
        "Reason": [s["reason"].replace("_", " ") for s in samples],
    }), hide_index=True, column_config={"Question (masked)": st.column_config.TextColumn(width="large")},
        key=f"samples_{gap.id}")


HISTORY_ICON = {"opened": ":red[:material/add_circle:]", "closed": ":green[:material/task_alt:]",
                "reopened": ":orange[:material/replay:]", "merged": ":blue[:material/merge:]",
                "split": ":blue[:material/call_split:]", "renamed": ":gray[:material/edit:]"}


def history_line(row: dict) -> str:
    event, detail, by = row["event"], row["detail"], md(row["actor"])
    article = f"`{row['article_path']}`" if row["article_path"] else "an article"
    sample = f"“{md(row['sample'])}”" if row["sample"] else "(sample purged by retention)"
    if event == "opened":
        if "split_from" in detail:
            return f"**Opened** by {by}, split off gap #{detail['split_from']}"
        return f"**Opened** by {by} on channel {md(detail.get('channel', '?'))}: {sample}"
    if event == "closed":
        replay = ""
        if "replayed" in detail:
            replay = f" — replay: {detail['answered']} of {detail['replayed']} samples answered"
        return f"**Closed** with {article} by {by}{replay}"
    if event == "reopened":
        if row["actor"] == "agent":
            similarity = f" (similarity {detail['similarity']})" if "similarity" in detail else ""
            return f"**Reopened**: {article} did not answer {sample}{similarity}"
        return f"**Reopened** by {by} (was closed with {article})"
    if event == "merged":
        return (f"**Merged** gap #{detail.get('gap')} “{md(detail.get('label', ''))}” ({detail.get('count', '?')}×) "
                f"into this one, by {by}")
    if event == "split":
        return f"**Split**: {detail.get('variants')} sample(s) moved to gap #{detail.get('into')} by {by}"
    if event == "renamed":
        return f"**Renamed** by {by} from “{md(detail.get('from', ''))}”"
    return f"**{md(event)}** by {by}"


def history_tab(rt: Runtime, ctx: TenantContext, gap: Gap) -> None:
    for row in reversed(rt.backlog.history(ctx, gap.id)):
        left, right = st.columns([1, 6], vertical_alignment="top")
        left.caption(stamp(row["at"]))
        right.markdown(f"{HISTORY_ICON.get(row['event'], ':gray[:material/circle:]')} {history_line(row)}")


# -- writing, checking, closing ---------------------------------------------------------------------------
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
                   + ("" if chain else "No LLM configured (COBERTURA_PROVIDER): the draft lists the customers' questions. ")
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
        st.warning(f"A source already exists at `{existing.path}` (“{md(existing.title)}”): publishing replaces its text.")
    if PLACEHOLDER in content:
        st.warning("The article still has [[FALTA: …]] placeholders: replace each with the real fact before publishing.")
    buttons = st.container(horizontal=True)
    buttons.button("Save draft", icon=":material/save:", key=f"save_{gap.id}", on_click=guarded(_save_draft),
                   args=(rt, ctx, gap.id))
    publish = buttons.button("Publish, train and check", icon=":material/publish:", type="primary", key=f"publish_{gap.id}")
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
            except USER_ERRORS as exc:
                st.error(str(exc))
    show_check(rt, ctx, gap, "write")


def train(rt: Runtime, ctx: TenantContext) -> None:
    bar = st.progress(0.0, text="Training…")

    def progress(done: int, total: int, path: str) -> None:
        bar.progress(done / total if total else 1.0, text=f"Training {done}/{total} {path}")

    report = rt.index.train(ctx, progress=progress)
    if report.trained:
        bar.progress(1.0, text=f"Trained {len(report.trained)} source(s) in {report.seconds:.1f} s.")
    else:
        bar.empty()
        st.caption("The knowledge was already trained: nothing changed since the last training.")


def check(rt: Runtime, ctx: TenantContext, gap: Gap, article: str, origin: str) -> None:
    """Train what changed, replay the gap's samples, keep the result for the confirm button."""
    train(rt, ctx)
    with st.spinner("Asking the stored samples again…"):
        rows = replay_gap(ctx, rt, gap.id, article)
    st.session_state[f"check_{gap.id}"] = {"article": article, "rows": rows, "origin": origin}


def _close(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    done = st.session_state.pop(f"check_{gap_id}")
    gap = rt.backlog.close(ctx, gap_id, done["article"], replay=done["rows"])
    flash("success", f"Gap #{gap.id} closed with `{gap.article_path}`. If it is asked again uncovered, it reopens.")


def _discard(gap_id: int) -> None:
    st.session_state.pop(f"check_{gap_id}", None)


def show_check(rt: Runtime, ctx: TenantContext, gap: Gap, origin: str) -> None:
    done = st.session_state.get(f"check_{gap.id}")
    if not done or done["origin"] != origin:
        return
    rows, article = done["rows"], done["article"]
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
    buttons = st.container(horizontal=True)
    buttons.button("Close gap with this article", icon=":material/task_alt:",
                   type="primary" if rows and answered == len(rows) else "secondary",
                   key=f"close_{gap.id}_{origin}", on_click=guarded(_close), args=(rt, ctx, gap.id))
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
                              format_func=lambda p: f"{p} — {titles[p]}", placeholder="Choose the source that answers this gap")
    if row[1].button("Check this article", icon=":material/fact_check:", key=f"check_existing_{gap.id}",
                     disabled=chosen is None, width="stretch"):
        try:
            check(rt, ctx, gap, chosen, "existing")
        except USER_ERRORS as exc:
            st.error(str(exc))
    show_check(rt, ctx, gap, "existing")


def _merge(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    others = st.session_state.get(f"merge_{gap_id}") or []
    gap = rt.backlog.merge(ctx, gap_id, others)
    st.session_state.pop(f"merge_{gap_id}", None)
    flash("success", f"Merged {', '.join(f'#{o}' for o in others)} into #{gap.id}: asked {gap.count}× now.")


def _split(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    chosen = st.session_state.get(f"split_{gap_id}") or []
    label = (st.session_state.get(f"split_label_{gap_id}") or "").strip() or None
    new = rt.backlog.split(ctx, gap_id, chosen, label)
    st.session_state.pop(f"split_{gap_id}", None)
    st.session_state.pop(f"split_label_{gap_id}", None)
    flash("success", f"Moved {len(chosen)} sample(s) into the new gap #{new.id} “{new.label}”.")


def _rename(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    gap = rt.backlog.rename(ctx, gap_id, st.session_state.get(f"label_{gap_id}", ""))
    flash("success", f"Gap #{gap.id} renamed to “{gap.label}”.")


def _reopen(rt: Runtime, ctx: TenantContext, gap_id: int) -> None:
    gap = rt.backlog.reopen(ctx, gap_id)
    st.session_state.pop(f"article_content_{gap_id}", None)  # start writing from the saved draft again
    flash("success", f"Gap #{gap.id} reopened.")


def merge_split_tab(rt: Runtime, ctx: TenantContext, gap: Gap, every_gap: list[Gap]) -> None:
    merge, split = st.columns(2, gap="large")
    with merge:
        st.markdown("**Merge** other gaps into this one: the same question, asked differently.")
        others = {g.id: g for g in every_gap if g.id != gap.id}
        st.multiselect("Gaps to fold in", list(others), key=f"merge_{gap.id}",
                       format_func=lambda i: gap_option(others[i]), placeholder="Choose gaps")
        st.button("Merge into this gap", icon=":material/merge:", key=f"do_merge_{gap.id}",
                  disabled=not st.session_state.get(f"merge_{gap.id}"), on_click=guarded(_merge), args=(rt, ctx, gap.id))
    with split:
        st.markdown("**Split** samples out into a new gap: they were a different question.")
        samples = {s["id"]: s for s in rt.backlog.samples(ctx, gap.id)}
        st.multiselect("Samples to move out", list(samples), key=f"split_{gap.id}", placeholder="Choose samples",
                       format_func=lambda i: samples[i]["sample"] or f"(purged) {stamp(samples[i]['at'])}")
        st.text_input("Label of the new gap (optional)", key=f"split_label_{gap.id}")
        st.button("Split into a new gap", icon=":material/call_split:", key=f"do_split_{gap.id}",
                  disabled=not st.session_state.get(f"split_{gap.id}"), on_click=guarded(_split), args=(rt, ctx, gap.id))


# -- the page -----------------------------------------------------------------------------------------------
def empty_state(slug: str) -> None:
    st.info(
        "**No gaps yet.** When a customer asks something the knowledge does not cover, the agent abstains (or "
        "withholds an answer it cannot support) instead of guessing, and the question lands here: personal data "
        "masked, merged with earlier ways of asking the same thing, counted per language and channel. Write the "
        "article that answers it, check it against the stored questions, and close the gap.",
        icon=":material/inbox:",
    )
    st.caption(f"Try it: `python -m core ask {slug} \"a question your knowledge does not answer\"`, then reload this page.")


def main() -> None:
    rt = common.runtime()
    ctx = common.context(rt)
    st.title("Gap backlog")
    st.caption("What the agent could not answer, most asked first. Write the article, check that it answers the "
               "stored questions, close the gap.")
    every_gap = rt.backlog.gaps(ctx)
    if not every_gap:
        show_flash()
        empty_state(ctx.tenant_slug)
        return
    metrics_and_trend(rt, ctx, every_gap)
    status, languages, channels, order = filters(every_gap)
    ordered = every_gap if ORDERS[order] == "count" else rt.backlog.gaps(ctx, order="recent")
    shown = [g for g in ordered if keep(g, status, languages, channels)]
    head = st.columns([4, 1], vertical_alignment="bottom")
    head[0].caption(f"{len(shown)} of {len(every_gap)} gap(s). Click a row to open it.")
    head[1].download_button("Export CSV", data=lambda: rt.backlog.export_csv(ctx), key="gaps_export",
                            file_name=f"gaps-{ctx.tenant_slug}.csv", mime="text/csv", icon=":material/download:",
                            on_click="ignore", width="stretch", help="Every gap of this tenant, with its latest sample")
    if not shown:
        st.info("No gap matches these filters.")
        show_flash()
        return
    table(shown)
    ids = [g.id for g in shown]
    if st.session_state.get("gap_id") not in ids:
        st.session_state["gap_id"] = ids[0]
    by_id = {g.id: g for g in shown}
    st.selectbox("Gap", ids, key="gap_id", format_func=lambda i: gap_option(by_id[i]), on_change=_picked_in_box)
    detail(rt, ctx, by_id[st.session_state["gap_id"]], every_gap)


main()
