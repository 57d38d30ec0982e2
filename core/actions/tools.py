"""The operations as the agent's tools (A2, C1, C3): a read operation is a ``live`` tool that runs now, a write
operation is a ``write`` tool whose only effect is a card proposal on the turn's evidence.

No write tool can execute anything: its handler validates the arguments, reads the current state for the card's
snapshot and appends a proposal; the turn pipeline records it as a card after the answer, and only an approval
click (:func:`core.actions.cards.approve`) runs the frozen card. Write tools, and read tools marked for
identified customers, are not offered at all to a turn without an identified customer (the public widget).
Everything an operation returns reaches the model through the injection guard, as data.
"""
from __future__ import annotations

import json
import secrets
from typing import Any

from core.actions import builtin, params as params_mod
from core.actions.model import ActionFault, Operation, OpKind
from core.agent import prompts
from core.agent.injection import defuse
from core.agent.protocol import ToolSpec
from core.agent.registry import Tool, ToolEnv, ToolKind, record_live

MAX_STRING_IN_RESULT = 4000
_ASK = {"es": "Para «{title}» necesito: {fields}. ¿Me lo indicas?",
        "pt": "Para «{title}» preciso de: {fields}. Pode indicar-mo?",
        "en": "To {title_lower} I need: {fields}. Could you give me that?"}
WRITE_NOTE = ("Calling this changes NOTHING by itself: it shows the customer a confirmation card with exactly these "
              "parameters, and the change runs only if a person approves it. Call it only when the customer asked "
              "for this change and gave its details; never to check or to guess.")
READ_NOTE = ("Live data from the business's systems: the result is current and may be cited with the result's "
             "cite_as for this turn only. An empty result means there is nothing for those parameters: say so.")


def ask_for(op: Operation, missing: tuple[str, ...], lang: str) -> str:
    """The question that asks the customer for the missing parameters, by name."""
    fields = ", ".join(params_mod.label(op.parameters, name) for name in missing)
    template = _ASK.get(lang, _ASK["en"])
    return template.format(title=op.title, title_lower=op.title[:1].lower() + op.title[1:], fields=fields)


def _quarantined(env: ToolEnv, value: Any, budget: list[int]) -> Any:
    """``value`` with every string through the injection guard (A6) and capped."""
    if isinstance(value, str):
        clean, removed = defuse(value[:MAX_STRING_IN_RESULT])
        budget[0] += removed
        return clean
    if isinstance(value, dict):
        return {str(k)[:200]: _quarantined(env, v, budget) for k, v in list(value.items())[:200]}
    if isinstance(value, list):
        return [_quarantined(env, v, budget) for v in value[:200]]
    return value


def quarantine(env: ToolEnv, value: Any) -> Any:
    removed = [0]
    clean = _quarantined(env, value, removed)
    if removed[0]:
        env.evidence.calls.append({"tool": "injection_guard", "arguments": {}, "status": "removed", "ids": [],
                                   "removed": removed[0]})
    return clean


def _fault(env: ToolEnv, message: str, op: Operation, switched_off: bool = False) -> dict:
    """A failing action ends the turn as a fault (never a gap, G4), telling the customer so in fixed words."""
    env.evidence.faults += 1
    lang = env.language or "en"
    said = prompts.message("actions_off", lang) if switched_off else prompts.message(
        "action_failed", lang).format(title=op.title)
    env.evidence.notice = {"text": said, "fault": True}
    return {"status": "error", "message": f"{message} This is a fault, not an answer: the customer is told you could "
            "not do it right now; your turn ends here."}


def _refuse(env: ToolEnv, service, op: Operation, key: str, facts: list[tuple[str, str]], state) -> None:
    """End the turn saying the change cannot be prepared: the fixed sentence, then the facts of the state just read,
    each cited as live data of this turn (the gate checks them like any live answer)."""
    lang = env.language or "en"
    text = json.dumps({"status": "found", "operation": op.name, "title": op.title, "data": state}, ensure_ascii=False,
                      default=str)
    live_id = record_live(env, op.name, op.title, service.stamp(), text)
    lines = "\n".join(f"- {name}: {value} [[cite:{live_id}]]" for name, value in facts)
    env.evidence.notice = {"text": f"{prompts.message(key, lang)}\n\n{lines}", "fault": False}


def _bad_arguments(op: Operation, checked: params_mod.Checked) -> dict:
    wrong = "; ".join([*checked.problems, *(f"{m} is missing" for m in checked.missing)])
    return {"status": "error", "message": f"{op.name} was called with arguments its schema refuses ({wrong}). Call it "
            f"again with valid values, or ask the customer for them."}


def read_handler(service, op: Operation):
    def handler(env: ToolEnv, arguments: dict) -> dict:
        checked = params_mod.check(op.parameters, arguments)
        if checked.missing and not checked.problems:  # the customer is asked for them by name, as for a write
            env.evidence.clarify = [{"question": ask_for(op, checked.missing, env.language or "en"), "options": []}]
            return {"status": "missing", "message": "The customer will be asked for "
                    + ", ".join(checked.missing) + ". Your turn ends here."}
        if not checked.ok:
            return _bad_arguments(op, checked)
        why = service.stopped(env.ctx)
        if why:
            return _fault(env, f"Actions are switched off now ({why}).", op, switched_off=True)
        done = service.executor(op).execute(env.ctx, op, checked.params, env.ctx.customer_id,
                                            f"read-{secrets.token_hex(8)}")
        if not done.ok and done.status != "http_404":  # a read answered 404: nothing for these parameters
            return _fault(env, f"The live source {op.name} failed ({done.status}): {done.message}", op)
        base = {"operation": op.name, "title": op.title, "params": checked.params, "fetched_at": service.stamp()}
        if not done.ok or done.body in (None, "", [], {}):
            return {"status": "empty", **base, "message": "The live source returned nothing for these parameters. Say "
                    "so plainly; do not guess or fill it in from the knowledge base."}
        return {"status": "found", **base, "data": quarantine(env, done.body)}
    return handler


def _preview(op: Operation, params: dict, state: dict | None, lang: str) -> list[dict]:
    """The change as a person reads it: one row per parameter, with the current value when the state has it."""
    if op.name == builtin.UPDATE_EMAIL:
        return [{"label": builtin.text(lang)["email"], "before": (state or {}).get("email", ""),
                 "value": params["new_email"]}]
    rows = []
    for name, value in params.items():
        row = {"label": params_mod.label(op.parameters, name), "value": value}
        if isinstance(state, dict) and name in state and state[name] != value:
            row["before"] = state[name]
        rows.append(row)
    return rows


def propose_handler(service, op: Operation):
    def handler(env: ToolEnv, arguments: dict) -> dict:
        if not env.ctx.customer_id:
            return {"status": "error", "message": "Changes need an identified customer; this visitor is anonymous. "
                    "Tell them to sign in on the business's site, or hand the conversation to a person."}
        if env.evidence.cards:
            return {"status": "error", "message": "A card was already proposed this turn; one change per turn. End "
                    "the turn and let the customer decide."}
        why = service.stopped(env.ctx)
        if why:
            return _fault(env, f"Actions are switched off now ({why}).", op, switched_off=True)
        checked = params_mod.check(op.parameters, arguments)
        if checked.problems:
            return _bad_arguments(op, checked)
        local = service.operation(env.ctx, op.name, env.language or "en") or op  # built-ins speak the language
        if checked.missing:
            env.evidence.clarify = [{"question": ask_for(local, checked.missing, env.language or "en"), "options": []}]
            return {"status": "found", "message": "The customer will be asked for "
                    + ", ".join(checked.missing) + ". Your turn ends here."}
        try:
            state = service.executor(op).current_state(env.ctx, op, checked.params, env.ctx.customer_id)
        except ActionFault as exc:
            return _fault(env, f"The current state for {op.name} could not be read ({exc}).", op)
        problem = builtin.precondition(env.ctx, service.store, op, checked.params, state) or _state_problem(op, state)
        if problem:  # the customer hears why: a fixed sentence and the facts of the state just read; the turn ends
            _refuse(env, service, local, "nothing_to_change" if problem[1] == "same" else "state_refusal", problem[2],
                    state)
            return {"status": "error", "message": f"{op.name} cannot be proposed now: {problem[0]} The customer is "
                    "told so; your turn ends here."}
        env.evidence.cards.append({"operation": op.name, "title": local.title, "params": checked.params,
                                   "preview": _preview(op, checked.params, state, env.language), "snapshot": state})
        return {"status": "found", "message": "A confirmation card with these parameters will be shown to the "
                "customer; nothing changes unless they approve it. Your turn ends here."}
    return handler


def _state_problem(op: Operation, state) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(for the model, kind, the state's facts as (field, value)) when the state forbids the change, or None."""
    schema = op.config.get("state_schema")
    problems = params_mod.state_problems(schema, state) if schema and state is not None else []
    if not problems:
        return None
    return (f"the current state does not allow it ({'; '.join(problems[:3])}).", "state",
            params_mod.state_facts(schema, state)[:3])


def _identified(env: ToolEnv) -> bool:
    return bool(env.ctx.customer_id)


def _always(env: ToolEnv) -> bool:
    return True


def operation_tool(service, op: Operation) -> Tool:
    """One operation as a tool of the agent."""
    description = defuse(op.description)[0]  # an MCP server's description is its text, not ours
    write = op.kind is OpKind.WRITE
    description = f"{description} {WRITE_NOTE if write else READ_NOTE}"
    spec = ToolSpec(op.name, description, op.parameters, str(op.kind), tuple(op.examples))
    return Tool(op.name, description, op.parameters, ToolKind.WRITE if write else ToolKind.LIVE,
                propose_handler(service, op) if write else read_handler(service, op),
                offered=_identified if op.requires_customer else _always, tailored=lambda env: spec)
