"""Sandbox (Q1): chat with the agent as any channel and as an anonymous or identified customer, and see
each turn's trace: the rewritten query, every retrieved chunk with its scores and why it was selected or
dropped, the tool calls, the gate's verdict per claim, provider, model, latency and tokens.

A refused turn shows its refusal trace and, for editors, a one-click form that turns the question into a
Q&A source; "Train now" indexes it and "Ask again" repeats the question. A partial answer (the material covers
the topic, not the point asked) is a gap too: its badge and trace name what the material does not mention, and
the same form is offered. Sandbox conversations are recorded
like any other (turns, gaps, handoffs), under the channel chosen here; every answer has the widget's 👍/👎
(``pages/answer_feedback.py``), and a 👎 of an answer puts it on the Gap backlog as "answered but not helpful".
"""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.agent.factory import make_agent
from core.base.errors import UserError
from core.channels import conversations
from core.channels.conversations import CHANNELS, ConversationError
from core.gaps.labels import question_path
from core.knowledge import sources
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import answer_feedback, common, table_layout, training, turn_status
from pages.display import md

VERDICTS = {  # plain symbols: the tables are drawn on a canvas, where an emoji font may be missing
    "supported": "✓ supported", "live_data": "✓ live data", "exempt": "– exempt",
    "invented_citation": "✗ invented citation", "value_mismatch": "✗ value mismatch",
    "weak_support": "✗ weak support", "uncited": "✗ uncited",
}
WHO = ("Anonymous", "Identified customer")
K_CONVERSATION, K_TURNS, K_TENANT, K_PENDING = "sbx_conversation", "sbx_turns", "sbx_tenant", "sbx_pending"
K_CHANNEL, K_WHO, K_CUSTOMER = "sbx_channel", "sbx_who", "sbx_customer"




def code(text: str) -> str:
    """Text shown as inline code (escapes are literal there: only backticks need care)."""
    return "`" + str(text or "").replace("`", "'") + "`"


def new_conversation() -> None:
    st.session_state[K_CONVERSATION] = None
    st.session_state[K_TURNS] = []


def ask_again(question: str) -> None:
    st.session_state[K_PENDING] = question


def open_form(key: str) -> None:
    st.session_state[f"sbx_qa_open_{key}"] = True


# -- asking ------------------------------------------------------------------------------------------
def ask(rt: Runtime, ctx: TenantContext, question: str) -> dict:
    """One turn in the current conversation (started here, with the customer id, when there is none)."""
    channel = st.session_state[K_CHANNEL]
    customer = None
    if st.session_state[K_WHO] == WHO[1]:
        customer = (st.session_state.get(K_CUSTOMER) or "").strip()
        if not customer:
            raise ConversationError("Write the customer's id, or chat as Anonymous.")
    agent = make_agent(rt, ctx=ctx)  # the tenant's agent: its settings, provider and model
    conversation_id = st.session_state.get(K_CONVERSATION)
    # a disabled channel (or an empty message) is refused before any row is written
    admitted = rt.turns.admit(ctx, question, channel, conversation_id)
    if conversation_id is None:
        admitted.conversation = conversations.start(ctx, rt.store, channel, customer)
        conversation_id = st.session_state[K_CONVERSATION] = admitted.conversation.id
    result = rt.turns.run_admitted(ctx, agent, admitted)
    question = admitted.message
    turn = {"key": f"{conversation_id}_{len(st.session_state[K_TURNS])}", "question": question, **result.as_dict()}
    st.session_state[K_TURNS].append(turn)
    return turn


# -- one turn ------------------------------------------------------------------------------------------
def citations_md(citations: list[dict]) -> str:
    lines = []
    for n, c in enumerate(citations, start=1):
        label = f"{md(c.get('path') or c['id'])} — {md(c.get('title') or '')}"
        if c.get("live"):  # a live action's result of that turn (A3), not a trained source
            label += f" · live data, fetched {md(c.get('fetched_at') or '?')}"
        lines.append(f"[{n}] [{label}]({c['url']})" if c.get("url") else f"[{n}] {label}")
    return "  \n".join(lines)


def candidates_frame(call: dict, hits: list[dict]) -> pd.DataFrame:
    rows = call.get("candidates")
    if rows is None:  # a trace from before candidates were kept: what was selected
        rows = [{**h, "selected": True} for h in hits if h["id"] in set(call.get("ids", []))]
    return pd.DataFrame([{
        "Chunk": r["id"], "Path": r.get("path", ""), "Type": ("★ " if r.get("starred") else "") + r.get("type", ""),
        "Score": r.get("score"), "Similarity": r.get("similarity"), "Best sentence": r.get("sentence_similarity"),
        "Phrasings agree": r.get("phrasings_agree"), "BM25": r.get("bm25"), "Found by": r.get("found_by", ""),
        "Selected": "✓ selected" if r.get("selected") else "✗ dropped", "Why": r.get("reason", ""),
    } for r in rows], columns=["Chunk", "Path", "Type", "Score", "Similarity", "Best sentence", "Phrasings agree",
                                    "BM25", "Found by", "Selected", "Why"])


def show_trace(trace: dict) -> None:
    tokens = f"{trace.get('input_tokens', 0)} in / {trace.get('output_tokens', 0)} out"
    st.markdown(f"**Provider** {code(trace.get('provider', '?'))} · **model** {code(trace.get('model', '?'))} · "
                f"**latency** {trace.get('latency_ms', 0):,} ms · **tokens** {tokens} · "
                f"**language** {trace.get('language', '?')} · **channel** {trace.get('channel', '?')}")
    if trace.get("abstained"):
        said = "Answered in part" if trace["abstained"] == "partial" else "Abstained"
        st.markdown(f"**{said}:** {code(trace['abstained'])} — {turn_status.REASONS.get(trace['abstained'], '')}")
    if turn_status.missing(trace):
        st.markdown(f"**Not in the material:** {turn_status.missing(trace)}")
    if trace.get("fault"):
        st.markdown(f"**Fault:** {md(trace['fault'])}")
    for name, error in trace.get("attempts") or []:
        st.caption(f"Failover: {md(name)} failed — {md(error)}")
    calls = trace.get("tools") or []
    if not calls:
        st.caption("No tool was called.")
    else:
        st.markdown("**Tool calls**")
        st.dataframe(pd.DataFrame([{
            "#": n, "Tool": c.get("tool", ""), "Arguments": json.dumps(c.get("arguments", {}), ensure_ascii=False),
            "Result": (c.get("status") or "") + (f" · live data {c['live_id']}" if c.get("live_id") else
                                                  " · live" if c.get("live") else ""), "Ids": len(c.get("ids") or []),
        } for n, c in enumerate(calls, start=1)]), hide_index=True, width="stretch")
    show_searches(calls, trace.get("hits") or [])
    show_gate_rounds(trace.get("gate") or [])
    if not trace.get("gate") and trace.get("abstained") is None and not trace.get("fault"):
        st.caption("The gate judged nothing this turn.")


def show_searches(calls: list[dict], hits: list[dict]) -> None:
    """Each knowledge search of the turn: its rewritten query and every candidate, selected or dropped."""
    searches = [c for c in calls if c.get("tool") == "search_knowledge"]
    for n, call in enumerate(searches, start=1):
        asked = str((call.get("arguments") or {}).get("query", ""))
        rewritten = call.get("rewritten", asked)
        head = f"**Search {n}** · rewritten query: {code(rewritten)}"
        if rewritten != asked:
            head += f" (asked: {code(asked)})"
        if "floor" in call:
            head += f" · similarity floor {call['floor']:.3f} · {call.get('ms', 0):.0f} ms"
        st.markdown(head)
        frame = candidates_frame(call, hits)
        if frame.empty:
            st.caption("No candidate at all: nothing trained matched these words.")
        else:
            st.dataframe(frame, hide_index=True, width="stretch", column_order=table_layout.CANDIDATE_ORDER,
                         column_config=table_layout.CANDIDATE_COLUMNS, row_height=table_layout.candidate_rows(frame),
                         placeholder="—")
        hidden = call.get("dropped_total", 0) - sum(1 for r in call.get("candidates", []) if not r.get("selected"))
        if hidden > 0:
            st.caption(f"{hidden} weaker dropped candidate(s) not kept in the trace.")


def show_gate_rounds(rounds: list[dict]) -> None:
    """The grounding gate's verdict on each claim, per round (the answer, then any revision)."""
    for gate in rounds:
        label = "answer" if gate["round"] == 0 else "revision"
        st.markdown(f"**Gate, round {gate['round'] + 1} ({label})** — " + ("passed" if gate["ok"] else "did not pass"))
        claims = pd.DataFrame([{
            "Claim": c["claim"], "Verdict": VERDICTS.get(c["verdict"], c["verdict"]),
            "Cites": ", ".join(c.get("citations") or []) or "—", "Detail": c.get("detail", ""),
            "Support": c.get("support", 0.0),
        } for c in gate["claims"]], columns=["Claim", "Verdict", "Cites", "Detail", "Support"])
        st.dataframe(claims, hide_index=True, width="stretch", column_config=table_layout.GATE_COLUMNS,
                     row_height=table_layout.gate_rows(claims))


def _trained(key: str, done: training.Trained) -> None:
    if done.report is not None:
        st.session_state[f"sbx_qa_trained_{key}"] = (f"Trained {len(done.report.trained)} source(s), "
                                                     f"{done.report.chunks} chunk(s) in {done.report.seconds:.1f} s.")


def qa_form(rt: Runtime, ctx: TenantContext, turn: dict) -> None:
    """Turn a refused (or partly answered) question into a Q&A source; train it; ask again."""
    key, question = turn["key"], turn["question"]
    saved, trained = st.session_state.get(f"sbx_qa_saved_{key}"), st.session_state.get(f"sbx_qa_trained_{key}")
    if not saved and not st.session_state.get(f"sbx_qa_open_{key}"):
        st.button("Create a Q&A source from this question", key=f"sbx_qa_create_{key}", icon=":material/add_notes:",
                  on_click=open_form, args=(key,))
        return
    if not saved:
        box = st.empty()  # the form goes away once saved
        with box.container(), st.form(f"sbx_qa_form_{key}"):
            st.markdown("**New Q&A source**")
            if turn_status.missing(turn["trace"]):
                st.caption(f"The material does not mention {turn_status.missing(turn['trace'])}: write the answer "
                           "that covers it.")
            path = st.text_input("Path", value=question_path(question, turn["trace"].get("language") or "es"),
                                 key=f"sbx_qa_path_{key}")
            title = st.text_input("Question", value=question, key=f"sbx_qa_question_{key}")
            answer = st.text_area("Answer", key=f"sbx_qa_answer_{key}",
                                  placeholder="Write the answer the agent should give, in the customer's language.")
            submitted = st.form_submit_button("Save", type="primary")
        if submitted:
            try:
                source = sources.save(ctx, rt.store, path, title=title, content=answer, type="qa", replace=False,
                                      origin="sandbox")
            except UserError as exc:
                st.error(str(exc))
                return
            saved = st.session_state[f"sbx_qa_saved_{key}"] = source.path
            box.empty()
        else:
            return
    st.success(f"Saved the Q&A source `{saved}`. It reaches answers after training.")
    if not trained:  # the button, then the live progress in its place (training runs in the background)
        place = f"sandbox:{key}"
        running = training.watch(ctx, place, lambda job, done: _trained(key, done))
        trained = st.session_state.get(f"sbx_qa_trained_{key}")
        if running is None and not trained:
            st.button("Train now", key=f"sbx_train_{key}", icon=":material/model_training:", type="primary",
                      on_click=training.start, args=(rt, ctx, place))
            st.caption("Train now indexes every changed source of this tenant.")
    if trained:
        st.success(trained)
        st.button("Ask again", key=f"sbx_again_{key}", icon=":material/replay:", on_click=ask_again, args=(question,))


def show_turn(rt: Runtime, ctx: TenantContext, turn: dict) -> None:
    with st.chat_message("user"):
        st.markdown(md(turn["question"]))
    with st.chat_message("assistant"):
        label, colour = turn_status.badge(turn["status"], turn["trace"])
        st.badge(label, color=colour)
        if turn_status.missing(turn["trace"]):
            st.caption(f"The material does not mention {turn_status.missing(turn['trace'])}: the "
                       "answer says so, then gives the closest cited facts. The point asked is a gap.")
        (st.warning if turn["status"] == "error" else st.markdown)(turn["answer"])
        for item in turn.get("clarify") or []:
            st.markdown(f"- {md(item['question'])}: " + " / ".join(md(o) for o in item["options"]))
        if turn.get("citations"):
            st.markdown(citations_md(turn["citations"]))
        notes = []
        if turn.get("gap_id") is not None:
            notes.append(f"recorded as gap #{turn['gap_id']} on the backlog")
        if turn.get("handoff_id") is not None:
            notes.append(f"handoff #{turn['handoff_id']} queued")
        if turn.get("truncated"):
            notes.append("truncated")
        if notes:
            st.caption(" · ".join(notes).capitalize() + ".")
        answer_feedback.rate_turn(rt, ctx, turn)  # 👍/👎 as the widget's: a 👎 of an answer lands on the backlog
        gap = turn_status.uncovered(turn["trace"])
        with st.expander(turn_status.trace_title(turn["trace"]), expanded=gap, icon=":material/troubleshoot:"):
            show_trace(turn["trace"])
        if gap:
            if ctx.can("editor"):
                qa_form(rt, ctx, turn)
            else:
                st.caption("An editor can turn this question into a Q&A source.")


# -- the page ------------------------------------------------------------------------------------------
rt = common.runtime()
ctx = common.page_context(rt)
if st.session_state.get(K_TENANT) != ctx.tenant_slug:  # another tenant: another conversation
    st.session_state[K_TENANT] = ctx.tenant_slug
    new_conversation()
st.session_state.setdefault(K_TURNS, [])
st.session_state.setdefault(K_CONVERSATION, None)

st.title("Sandbox")
st.caption("Chat with the agent as a customer would, and see how each answer was found and checked. "
           "Turns are recorded like any other conversation; refusals enter the gap backlog under the chosen channel.")
left, middle, right, end = st.columns([2, 2, 3, 2], vertical_alignment="bottom")
left.selectbox("Channel", CHANNELS, index=CHANNELS.index("sandbox"), key=K_CHANNEL, on_change=new_conversation,
               help="The channel decides the policy: in support channels a second uncovered question hands the "
                    "conversation to a person; the public widget (web) only refuses.")
middle.selectbox("Customer", WHO, key=K_WHO, on_change=new_conversation)
identified = st.session_state[K_WHO] == WHO[1]
right.text_input("Customer id", key=K_CUSTOMER, disabled=not identified, on_change=new_conversation,
                 placeholder="e.g. cus_1042" if identified else "anonymous")
end.button("New conversation", key="sbx_new", icon=":material/add_comment:", on_click=new_conversation, width="stretch")

status_line = st.empty()  # filled last: this run's message may start the conversation
for turn in st.session_state[K_TURNS]:
    show_turn(rt, ctx, turn)

pending = st.session_state.pop(K_PENDING, None)  # "Ask again" after training a new Q&A source
prompt = st.chat_input("Write as the customer…") or pending
if prompt:
    try:
        with st.spinner("The agent is answering…"):
            turn = ask(rt, ctx, prompt)
    except UserError as exc:
        st.error(str(exc))
    except Exception as exc:  # never a traceback on the page
        st.error(f"The turn failed: {exc.__class__.__name__}: {exc}")
    else:
        show_turn(rt, ctx, turn)

conversation_id = st.session_state[K_CONVERSATION]
if conversation_id:
    who = f"customer {code(st.session_state.get(K_CUSTOMER, ''))}" if identified else "anonymous"
    status_line.caption(f"Conversation {code(conversation_id)} · channel {code(st.session_state[K_CHANNEL])} · {who} · "
                        f"{len(st.session_state[K_TURNS])} turn(s)")
else:
    status_line.caption("The next message starts a new conversation.")
