"""Actions (C1–C4): what the agent may do for this tenant besides answering, and the switch that stops it all.

The operations of the tenant (built-in, HTTP, MCP) in one table; the schema and example phrasings of any of them;
a test bench (a dry run renders the request with the secret masked and reads the current state, executing
nothing; a read operation can also run live); the tenant's HTTP actions (define, edit, delete, import:
:mod:`pages.action_form`), its MCP servers (:mod:`pages.action_mcp`), and the actions kill switch. Admins change
definitions and switches; editors see everything read-only and may test; QA does not see the page.
"""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.actions import switch as switches
from core.actions.model import Operation, OpKind, OpSource
from core.base.errors import UserError
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import common
from pages.action_form import http_actions
from pages.action_mcp import mcp_servers
from pages.display import code, md, sentence, stamp

SOURCE_LABEL = {OpSource.BUILTIN: "built-in", OpSource.HTTP: "HTTP", OpSource.MCP: "MCP"}
OP_KEY = "act_op"

_flash = common.Flash("act_flash")
flash, show_flash = _flash.set, _flash.show


# -- the kill switch -------------------------------------------------------------------------------------------
def switch(rt: Runtime, ctx: TenantContext) -> None:
    """The global switch (environment) as a banner, then this tenant's actions switch (admins flip it)."""
    if rt.settings.kill_switch:
        st.error("**COBERTURA_KILL_SWITCH is on for this server:** no action runs and no card executes, for any "
                 "tenant, until the server is started without it. Approvals are refused; reads fail.",
                 icon=":material/power_off:")
    stopped = rt.actions.stopped(ctx)
    off = switches.actions_off(ctx, rt.store)
    with st.container(border=True):
        if off:
            why = f" ({md(off['reason'])})" if off["reason"] else ""
            st.markdown(f":red[**Actions are switched OFF for this tenant**] by {md(off['changed_by'])} "
                        f"{stamp(off['changed_at'])}{why}. The agent offers no action, live reads stop, and approving "
                        "a card executes nothing (it is refused).")
        elif stopped:
            st.markdown(f":orange[**Actions are stopped:**] {md(sentence(stopped))}")
        else:
            st.markdown(":green[**Actions are on.**] The switch stops every action of this tenant at once, also "
                        "cards already approved but not yet executed.")
        if not ctx.can("admin"):
            return
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        if off:
            left.caption("Switching back on lets the agent offer actions again; cards refused meanwhile stay refused.")
            right.button("Switch actions back on", key="act_switch_on", type="primary", icon=":material/power:",
                         width="stretch", on_click=set_switch, args=(rt, ctx, False))
        else:
            left.text_input("Note (optional: why, shown here while actions are off)", key="act_switch_reason",
                            max_chars=200, placeholder="e.g. the shop API is being migrated")
            right.button("Switch actions off", key="act_switch_off", icon=":material/power_settings_new:",
                         width="stretch", on_click=set_switch, args=(rt, ctx, True))


def set_switch(rt: Runtime, ctx: TenantContext, off: bool) -> None:
    """A callback (it runs before the page redraws, so the note box starts empty again)."""
    try:
        rt.actions.set_switch(ctx, off, reason=st.session_state.get("act_switch_reason", "").strip() if off else "")
    except UserError as exc:
        flash("error", str(exc))
        return
    st.session_state["act_switch_reason"] = ""
    flash("success", "Actions are switched off for this tenant." if off else "Actions are on again.")


# -- the operations, their schema, the test bench ----------------------------------------------------------------
def table(ops: list[Operation]) -> None:
    frame = pd.DataFrame([{"Name": op.name, "Title": op.title, "Kind": str(op.kind),
                           "Source": SOURCE_LABEL.get(op.source, str(op.source)),
                           "Identified only": op.identified_only, "Enabled": op.enabled} for op in ops],
                         columns=["Name", "Title", "Kind", "Source", "Identified only", "Enabled"])
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "Name": st.column_config.TextColumn(width=240), "Title": st.column_config.TextColumn(width=300),
        "Kind": st.column_config.TextColumn(width=70, help="read: live data; write: only through an approved card"),
        "Source": st.column_config.TextColumn(width=80),
        "Identified only": st.column_config.CheckboxColumn(width=110, help="Offered only to identified customers"),
        "Enabled": st.column_config.CheckboxColumn(width=80)})


def skeleton(op: Operation) -> str:
    """A starting params JSON: each property with its default, first example or first enum value, else empty."""
    props = (op.parameters or {}).get("properties") or {}
    start = {}
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        for source in ("default", "examples", "enum"):
            if source in prop:
                value = prop[source]
                start[name] = value[0] if source != "default" and isinstance(value, list) and value else value
                break
        else:
            start[name] = 0 if prop.get("type") in ("integer", "number") else ""
    return json.dumps(start, indent=2, ensure_ascii=False)


def schema(op: Operation) -> None:
    st.markdown(f"**{md(op.title)}** · {op.kind} · {SOURCE_LABEL.get(op.source, op.source)}"
                + ("" if op.enabled else " · :orange[disabled]"))
    st.caption(md(op.description))
    st.markdown("**Parameters (JSON Schema)**")
    st.json(op.parameters, expanded=True)
    st.markdown("**Example phrasings**")
    st.markdown("\n".join(f"- `{code(e)}`" for e in op.examples) or "*(none: the offline responder never picks it)*")
    config = op.config or {}
    if op.source == OpSource.HTTP:
        st.markdown("**Request**" + (f" (secret from `{code(config['auth_env'])}`)" if config.get("auth_env") else ""))
        st.code(f"{config.get('method', 'GET')} {config.get('url', '')}", language=None, wrap_lines=True)
        if config.get("state_url"):
            st.markdown("**State (re-read at the click)**")
            st.code(f"GET {config['state_url']}", language=None, wrap_lines=True)
        if config.get("state_schema"):
            st.markdown("**State schema** (the state must satisfy it to propose and to execute)")
            st.json(config["state_schema"], expanded=False)
    elif op.source == OpSource.MCP:
        st.markdown(f"**MCP tool** `{config.get('tool', '')}` on server **{md(config.get('server', ''))}**")


def params_of(op: Operation) -> dict | None:
    text = st.session_state.get(f"act_params_{op.name}", "").strip() or "{}"
    try:
        params = json.loads(text)
    except json.JSONDecodeError as exc:
        st.error(f"The parameters are not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).")
        return None
    if not isinstance(params, dict):
        st.error("The parameters must be a JSON object, e.g. {\"order_id\": \"1001\"}.")
        return None
    return params


def bench(rt: Runtime, ctx: TenantContext, op: Operation) -> None:
    """Dry run (nothing executed) and, for a read, a live run."""
    st.markdown("**Test**")
    st.session_state.setdefault(f"act_params_{op.name}", skeleton(op))
    st.text_area("Parameters (JSON)", key=f"act_params_{op.name}", height=140)
    st.text_input("As customer (optional)", key="act_customer", max_chars=200,
                  placeholder="a customer id, e.g. demo-customer-1",
                  help="Fills {customer_id} and reads that customer's state, as when the action runs for them.")
    customer = st.session_state.get("act_customer", "").strip() or None
    row = st.container(horizontal=True)
    dry = row.button("Dry run", key="act_dry_run", icon=":material/visibility:",
                     help="Validates the parameters, renders the request (secret masked) and reads the current "
                          "state; executes nothing.")
    live = op.kind == OpKind.READ and row.button("Run", key="act_run", type="primary", icon=":material/play_arrow:",
                                                 help="Calls the live source now (a read changes nothing).")
    if not (dry or live):
        return
    params = params_of(op)
    if params is None:
        return
    try:
        with st.spinner("Calling…" if live else "Rendering the request…"):
            result = (rt.actions.dry_run(ctx, op.name, params, customer) if dry else
                      rt.actions.run_read(ctx, op.name, params, customer))
    except UserError as exc:
        st.error(str(exc))
        return
    if dry:
        dry_run(result)
        return
    (st.success if result.ok else st.error)(f"**{result.status}**" + (f": {md(result.message)}"
                                                                         if result.message else ""))
    st.json(result.body if isinstance(result.body, (dict, list)) else {"text": result.body}, expanded=True)


def dry_run(result: dict) -> None:
    """What a dry run found: the request as it would go (secret masked), the current state, and any warning."""
    st.caption("Dry run: nothing was executed; only the current state was read.")
    if result.get("stopped"):
        st.warning(f"Actions are off now: {md(sentence(result['stopped']))} A real run would be refused.")
    request = result.get("request")
    if request:
        for warning in request.get("warnings") or []:
            st.warning(md(warning))
        st.markdown("**The request**")
        st.code(f"{request['method']} {request['url']}", language=None, wrap_lines=True)
        st.json({"headers": request.get("headers"), "body": request.get("body")}, expanded=True)
    if "state_error" in result:
        st.error(f"The current state could not be read: {md(result['state_error'])}")
    elif result.get("state") is not None:
        st.markdown("**The current state**")
        st.json(result["state"], expanded=True)
    else:
        st.caption("This operation has no state to re-check.")
    with st.expander("Everything the dry run returned"):
        st.json(result, expanded=False)


def operations(rt: Runtime, ctx: TenantContext, ops: list[Operation]) -> None:
    st.caption("Read operations fetch live data the agent may cite for that turn; write operations only ever become "
               "a card that the identified customer (in the chat) or staff (Cards page) approve.")
    table(ops)
    if not ops:
        return
    names = [op.name for op in ops]
    if st.session_state.get(OP_KEY) not in names:
        st.session_state[OP_KEY] = names[0]
    by_name = {op.name: op for op in ops}
    chosen = by_name[st.selectbox("Operation", names, key=OP_KEY,
                                  format_func=lambda name: f"{name} — {by_name[name].title}")]
    left, right = st.columns([1, 1], gap="large")
    with left:
        schema(chosen)
    with right:
        bench(rt, ctx, chosen)


def main() -> None:
    rt = common.open_app()
    ctx = common.page_context(rt)
    st.title("Actions")
    if not (ctx.can("editor") or ctx.can("admin")):
        st.error(f"Only an admin or an editor sees the actions; you are signed in as {ctx.role}.")
        st.stop()
    show_flash()
    switch(rt, ctx)
    ops = rt.actions.operations(ctx)
    tabs = st.tabs(["Operations", "HTTP actions", "MCP servers"])
    with tabs[0]:
        operations(rt, ctx, ops)
    with tabs[1]:
        http_actions(rt, ctx, ops)
    with tabs[2]:
        mcp_servers(rt, ctx, ops)


main()
