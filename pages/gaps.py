"""Gap backlog: what the agent could not answer, merged and masked, until an article closes it.

The editorial loop of the product: pick the most asked gap, read its (masked) samples, write or pick
the article that answers it, publish and train, replay the stored samples against the new knowledge,
and close the gap once the check is convincing. Merge, split, rename, reopen and a CSV export too.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import streamlit as st

from core.channels import handoff
from core.gaps.backlog import Gap
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import common, gap_feedback, turn_status
from pages.display import ago, md, stamp
from pages.gap_actions import flash, guarded, show_flash
from pages.gap_article import existing_tab, write_tab

STATUS_FILTERS = {"To do (open + reopened)": None, "Open": "open", "Reopened": "reopened", "Closed": "closed",
                  "All": None}
ORDERS = {"Most asked": "count", "Most recent": "recent"}
SANDBOX_PAGE = "pages/sandbox.py"  # where the empty backlog sends you to try questions
STATUSES = ("open", "reopened", "closed")
STATUS_COLOR = {"open": "red", "reopened": "orange", "closed": "green"}
STATUS_CSS = {"open": "color: #d93025", "reopened": "color: #e37400", "closed": "color: #188038"}


# -- top of the page ----------------------------------------------------------------------------------
def metrics_and_trend(rt: Runtime, ctx: TenantContext, gaps: list[Gap]) -> None:
    rows = rt.backlog.trend(ctx, days=30)
    today = datetime.now(timezone.utc).date()
    per_day = pd.DataFrame(rows, columns=["day", "language", "channel", "questions"])
    per_day["day"] = pd.to_datetime(per_day["day"]).dt.date
    last7 = int(per_day.loc[per_day["day"] > today - timedelta(days=7), "questions"].sum())
    before7 = int(per_day.loc[(per_day["day"] <= today - timedelta(days=7))
                              & (per_day["day"] > today - timedelta(days=14)), "questions"].sum())
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
    fig.update_yaxes(rangemode="tozero", tick0=0,
                     dtick=max(1, int(by_language.groupby("day")["questions"].sum().max() // 4)))
    fig.update_layout(margin=dict(l=0, r=0, t=30, b=0), bargap=0.15,
                      title=dict(text="Uncovered questions per day, last 30 days", font=dict(size=14)),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1, title=None))
    st.plotly_chart(fig, config={"displayModeBar": False})


def filters(gaps: list[Gap]) -> tuple[str, list[str], list[str], str]:
    languages = sorted({lang for g in gaps for lang in g.languages})
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
        "Kind": [g.kind_label for g in shown],
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
        hide_index=True, key=key, on_select=_pick_row, selection_mode="single-row",
        height=min(38 + 35 * len(shown), 400),
        column_order=[c for c in frame.columns if c != "Article" or any(g.article_path for g in shown)],
        column_config={
            "#": st.column_config.NumberColumn(width=50, format="%d"),
            "Question": st.column_config.TextColumn(width=290, help="The gap's label (rename it below)"),
            "Languages": st.column_config.TextColumn(width="small"),
            "Channels": st.column_config.TextColumn(width=150),
            "Asked": st.column_config.ProgressColumn(
                min_value=0, max_value=top, format="%d×", width="small",
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
            st.subheader(f"#{gap.id} · {md(gap.label)} :{STATUS_COLOR[gap.status]}-badge[{gap.status}]"
                         + gap_feedback.kind_badge(gap), anchor=False)
            facts = [f"asked **{gap.count}×**", f"first seen {stamp(gap.first_seen)}",
                     f"last seen {ago(gap.last_seen)}", f"languages {', '.join(gap.languages) or '—'}",
                     f"channels {', '.join(gap.channels) or '—'}"]
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
                st.text_input("Label", key=key,
                              help="A few words that name the question; kept when samples are purged.")
                st.button("Save label", key=f"rename_{gap.id}", on_click=guarded(_rename), args=(rt, ctx, gap.id))
            if gap.status == "closed":
                st.button("Reopen", icon=":material/undo:", key=f"reopen_{gap.id}", on_click=guarded(_reopen),
                          args=(rt, ctx, gap.id))
        show_flash()
        extra = gap_feedback.tabs_for(gap)  # an answer marked unhelpful: that answer and its citations first
        tabs = st.tabs([*extra, "Samples", "History", "Write article", "Close with an existing article",
                        "Merge or split"])
        if extra:
            with tabs[0]:
                gap_feedback.unhelpful_tab(rt, ctx, gap)
            tabs = tabs[len(extra):]
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
        "Reason": [turn_status.REASON_LABELS.get(s["reason"], s["reason"].replace("_", " ")) for s in samples],
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
            if "changed" in detail:
                replay += f", {detail['changed']} differently from the answer marked unhelpful"
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
    if event == "withdrawn":
        return "**Withdrawn**: a thumbs down on one of its answers became a thumbs up (asked one time fewer)"
    if event == "renamed":
        return f"**Renamed** by {by} from “{md(detail.get('from', ''))}”"
    return f"**{md(event)}** by {by}"


def history_tab(rt: Runtime, ctx: TenantContext, gap: Gap) -> None:
    for row in reversed(rt.backlog.history(ctx, gap.id)):
        left, right = st.columns([1, 6], vertical_alignment="top")
        left.caption(stamp(row["at"]))
        right.markdown(f"{HISTORY_ICON.get(row['event'], ':gray[:material/circle:]')} {history_line(row)}")


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
                  disabled=not st.session_state.get(f"merge_{gap.id}"), on_click=guarded(_merge),
                  args=(rt, ctx, gap.id))
    with split:
        st.markdown("**Split** samples out into a new gap: they were a different question.")
        samples = {s["id"]: s for s in rt.backlog.samples(ctx, gap.id)}
        st.multiselect("Samples to move out", list(samples), key=f"split_{gap.id}", placeholder="Choose samples",
                       format_func=lambda i: samples[i]["sample"] or f"(purged) {stamp(samples[i]['at'])}")
        st.text_input("Label of the new gap (optional)", key=f"split_label_{gap.id}")
        st.button("Split into a new gap", icon=":material/call_split:", key=f"do_split_{gap.id}",
                  disabled=not st.session_state.get(f"split_{gap.id}"), on_click=guarded(_split),
                  args=(rt, ctx, gap.id))


# -- the page -----------------------------------------------------------------------------------------------
def empty_state(slug: str) -> None:
    st.info(
        "**No gaps yet.** When a customer asks something the knowledge does not cover, the agent abstains (or "
        "withholds an answer it cannot support) instead of guessing, and the question lands here: personal data "
        "masked, merged with earlier ways of asking the same thing, counted per language and channel. Write the "
        "article that answers it, check it against the stored questions, and close the gap.",
        icon=":material/inbox:",
    )
    st.page_link(SANDBOX_PAGE, label="Try it: ask the Sandbox a question your knowledge does not answer",
                 icon=":material/forum:")
    st.caption(f"The gap appears here at once (tenant `{slug}`), with the question's personal data masked.")


def main() -> None:
    rt = common.runtime()
    ctx = common.page_context(rt)
    st.title("Gap backlog")
    st.caption("What the agent could not answer, and the answers marked unhelpful, most asked first. Write the "
               "article, check that it answers the stored questions, close the gap.")
    every_gap = rt.backlog.gaps(ctx)
    if not every_gap:
        show_flash()
        empty_state(ctx.tenant_slug)
        return
    metrics_and_trend(rt, ctx, every_gap)
    status, languages, channels, order = filters(every_gap)
    ordered = every_gap if ORDERS[order] == "count" else rt.backlog.gaps(ctx, order="recent")
    shown = [g for g in ordered if keep(g, status, languages, channels)]
    kind = gap_feedback.kind_filter(shown)  # counted among the gaps the other filters keep
    shown = [g for g in shown if gap_feedback.keep_kind(g, kind)]
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
