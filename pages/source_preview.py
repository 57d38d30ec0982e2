"""The Sources page's read-only previews: the impact of a change before it is saved (the recent answers,
closed gaps and QA cases that cite what it touches), and exactly the extracted text of a source and how it
is chunked."""
from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from core.knowledge.chunking import MAX_CHARS, OVERLAP
from core.knowledge.sources import Source
from core.knowledge.training import chunk_id, chunk_source, source_units
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import turn_status
from pages.display import stamp

CHUNK_COLORS = ("#dbeafe", "#dcfce7")  # alternate chunks
OVERLAP_COLOR = "#fde68a"  # text that two neighbouring chunks share


# -- impact preview -------------------------------------------------------------------------------------------
def impact_box(report: dict, verb: str, proposed: bool = False) -> None:
    """The answers, closed gaps and QA cases touched, shown before the change is saved."""
    n, m, k = report["answers_affected"], report["closed_gaps"], len(report["qa_cases"])
    window = f"last {report['days']} days, newest {report['limit']} at most"
    if proposed and report["chunk_ids"] and not report["changed_chunk_ids"]:
        st.info(f"**This {verb} changes no trained chunk**: answers, closed gaps and QA cases keep what they cited. "
                f"(It is cited by {len(report['answers'])} recent answer(s); {m} closed gap(s), {k} QA case(s) "
                "rely on it.)",
                icon=":material/check_circle:")
    elif (n or m or k) and proposed:
        changed = (f" — {len(report['changed_chunk_ids'])} of {len(report['chunk_ids'])} trained chunk(s) change"
                   if report["chunk_ids"] else "")
        st.warning(f"**This {verb} changes chunks cited by {n} recent answer(s), {m} closed gap(s), {k} QA case(s)**"
                   f"{changed}. Check them before saving.", icon=":material/warning:")
    elif n or m or k:
        st.warning(f"**{verb} touches what {n} recent answer(s), {m} closed gap(s) and {k} QA case(s) cite**: after a "
                   "move they name a path that no longer exists, after a delete the text they relied on is gone. "
                   "Check them first.", icon=":material/warning:")
    else:
        st.success(f"No recent answer ({window}), closed gap or QA case cites this: nothing to check.",
                   icon=":material/check_circle:")
    if report["answers"]:
        with st.expander(f"Recent answers citing it ({len(report['answers'])}, {window})", expanded=n > 0):
            st.dataframe(pd.DataFrame({
                "When": [stamp(a["at"]) for a in report["answers"]],
                "Question": [a["question"] for a in report["answers"]],
                "Status": [turn_status.STATUS.get(a["status"], (a["status"],))[0] for a in report["answers"]],
                "Answer (excerpt)": [a["answer"] for a in report["answers"]],
                "Cites a changed chunk": ["✓" if a["affected"] else "–" for a in report["answers"]],
                "Conversation": [a["conversation_id"] for a in report["answers"]],
            }), hide_index=True, column_config={"Answer (excerpt)": st.column_config.TextColumn(width="large")},
                column_order=None if proposed else ["When", "Question", "Status", "Answer (excerpt)", "Conversation"])
    if report["gaps"]:
        with st.expander(f"Gaps closed with it ({len(report['gaps'])})", expanded=m > 0):
            st.dataframe(pd.DataFrame({
                "#": [g["id"] for g in report["gaps"]], "Gap": [g["label"] for g in report["gaps"]],
                "Status": [g["status"] for g in report["gaps"]], "Article": [g["article_path"] for g in report["gaps"]],
                "Closed": [stamp(g["closed_at"]) for g in report["gaps"]],
                "Asked": [g["count"] for g in report["gaps"]],
            }), hide_index=True)
    if report["qa_cases"]:
        with st.expander(f"QA cases expecting it ({k})", expanded=k > 0):
            st.dataframe(pd.DataFrame({
                "Suite": [str(c["suite"] or "") for c in report["qa_cases"]],
                "Question": [c["question"] for c in report["qa_cases"]],
                "Expects": [c["expect"] for c in report["qa_cases"]], "Cite": [c["cite"] for c in report["qa_cases"]],
            }), hide_index=True)


# -- extracted text and chunks ---------------------------------------------------------------------------------
def preview_text(source: Source) -> str:
    """The text the chunker cuts: a Q&A pair is 'question, newline, answer'; anything else its content."""
    return f"{source.title.strip()}\n{source.content.strip()}" if source.type == "qa" else source.content


def highlighted(text: str, spans: list[tuple[int, int, str]]) -> str:
    """The exact text, each chunk tinted, the overlaps of neighbours in amber, a label at each chunk start."""
    cuts = sorted({0, len(text), *(a for a, _, _ in spans), *(b for _, b, _ in spans)})
    starts = {a: n for n, (a, _, _) in reversed(list(enumerate(spans, start=1)))}
    out = []
    for a, b in zip(cuts, cuts[1:]):
        if a in starts:
            out.append(f'<span style="background:#1e3a8a;color:#fff;border-radius:3px;padding:0 3px;font-size:0.7em;'
                       f'user-select:none" title="chunk {starts[a]} starts">{starts[a]}</span>')
        covering = [n for n, (s, e, _) in enumerate(spans) if s <= a and b <= e]
        piece = html.escape(text[a:b])
        if len(covering) > 1:
            out.append(f'<span style="background:{OVERLAP_COLOR}" title="overlap of chunks '
                       f'{" and ".join(str(c + 1) for c in covering)}">{piece}</span>')
        elif covering:
            out.append(f'<span style="background:{CHUNK_COLORS[covering[0] % 2]}" '
                       f'title="chunk {covering[0] + 1}">{piece}</span>')
        else:
            out.append(piece)
    return ('<div style="white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:0.85em;line-height:1.5;'
            'max-height:520px;overflow:auto;border:1px solid #e5e7eb;border-radius:6px;padding:10px">'
            + "".join(out) + "</div>")


def _unit_label(unit: dict) -> str:
    """'FAQ: Why do …?', 'command', 'paragraph' …: what a person reads as one piece."""
    names = {"faq": "FAQ", "procedure": "sentence + command", "section": "heading + text", "qa": "Q&A"}
    label = names.get(unit["kind"], unit["kind"])
    return f"{label}: {unit['question'][:60]}" if unit.get("question") and unit["kind"] == "faq" else label


def chunks_tab(rt: Runtime, ctx: TenantContext, source: Source) -> None:
    text, spans, units = preview_text(source), chunk_source(source), source_units(source)
    trained = {c.id for c in rt.index.chunks_of(ctx, source.id)}
    rows = []
    for n, (start, end, chunk) in enumerate(spans):
        previous_end = spans[n - 1][1] if n else start
        cid = chunk_id(source.id, n, chunk)
        inside = [u for u in units if u["start"] < end and u["end"] > start]
        rows.append({"#": n + 1, "Units": ", ".join(_unit_label(u) for u in inside),
                     "Start": start, "End": end, "Length": end - start,
                     "Overlap with previous": max(0, previous_end - start) if n else 0,
                     "Trained": "✓" if cid in trained else "pending", "Chunk id": cid, "Text": chunk})
    note = "" if not source.changed else (
        f" **Changed since training**: this is how the next training will cut it; {len(trained)} chunk(s) of the "
        "earlier version are what the agent sees until then.")
    st.caption(f"Exactly the text extracted from this source ({len(text)} characters) and its {len(spans)} "
               f"chunk(s): at most {MAX_CHARS:,} characters each, neighbours overlapping by about {OVERLAP}. "
               + ("A Q&A pair is cut as question, newline, answer." if source.type == "qa" else "") + note)
    st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"chunks_{source.id}", column_config={
        "Text": st.column_config.TextColumn(width="large"), "Chunk id": st.column_config.TextColumn(width="small")})
    st.markdown(f"<span style='background:{CHUNK_COLORS[0]};padding:0 6px'>chunk</span> "
                f"<span style='background:{CHUNK_COLORS[1]};padding:0 6px'>next chunk</span> "
                f"<span style='background:{OVERLAP_COLOR};padding:0 6px'>overlap (in both)</span> "
                "untinted: between paragraphs, in no chunk", unsafe_allow_html=True)
    st.html(highlighted(text, spans))
