"""The Actions page's MCP servers: connect one (its tools become operations), refresh its tools, and per tool the
kind (read or write; the server's ``readOnlyHint`` decides until an admin overrides it) and whether it is enabled.

Discovery talks to the server over streamable HTTP (:func:`core.actions.mcp.discover`); the auth secret comes from
an environment variable named here, read when the server is called, never stored. Admins change; editors see.
"""
from __future__ import annotations

import os

import streamlit as st

from core.actions import definitions, mcp
from core.actions.model import Operation, OpSource
from core.base.errors import UserError
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import common
from pages.display import code, md, stamp

PREFIX = "mcp_"
DEFAULT_HEADER, DEFAULT_VALUE = "Authorization", "Bearer {secret}"

_flash = common.Flash("mcp_flash")
flash, show_flash = _flash.set, _flash.show


def k(name: str) -> str:
    return PREFIX + name


def connect(rt: Runtime, ctx: TenantContext, name: str, url: str, auth_header: str = "", auth_value: str = "",
            auth_env: str = "") -> tuple[int, list[dict]]:
    """Discover the server's tools and store the connection: (how many tools, the ones stored disabled and why)."""
    name, url, auth_env = name.strip(), url.strip(), auth_env.strip()
    auth_header, auth_value = auth_header.strip(), auth_value.strip()
    if auth_env:
        auth_header, auth_value = auth_header or DEFAULT_HEADER, auth_value or DEFAULT_VALUE
    if not url:
        raise UserError("Give the MCP server's URL (its streamable HTTP endpoint, e.g. https://mcp.example.com/mcp).")
    config = {"server": name, "auth_header": auth_header, "auth_value": auth_value, "auth_env": auth_env}
    tools = mcp.discover(url, mcp.auth_headers(config, os.environ))  # the secret is read now, never kept
    problems = definitions.connect_mcp(ctx, rt.store, name, url, tools, auth_header=auth_header,
                                       auth_value=auth_value, auth_env=auth_env)
    return len(tools), problems


def connected(name: str, count: int, problems: list[dict], again: bool = False) -> None:
    what = "Refreshed" if again else "Connected"
    flash("success", f"{what} **{md(name)}**: {count} tool{'s' if count != 1 else ''}"
          + (" (your kind and enabled choices are kept)." if again else
             ". Read-only tools (readOnlyHint) are reads; every other tool is a write (a card a person approves)."))
    for problem in problems:
        flash("warning", f"Tool `{code(problem.get('tool'))}` is stored disabled: {md(problem.get('problem'))}")


def _set_kind(rt: Runtime, ctx: TenantContext, op_name: str) -> None:
    try:  # "" = back to the server's hint
        definitions.set_tool_override(ctx, rt.store, op_name, kind=st.session_state[k(f"kind_{op_name}")] or "")
    except UserError as exc:
        flash("error", str(exc))


def _set_enabled(rt: Runtime, ctx: TenantContext, op_name: str) -> None:
    try:
        definitions.set_tool_override(ctx, rt.store, op_name, disabled=not st.session_state[k(f"on_{op_name}")])
    except UserError as exc:
        flash("error", str(exc))


# -- the tab ------------------------------------------------------------------------------------------------------
def connect_form(rt: Runtime, ctx: TenantContext) -> None:
    """The form; a connection made empties it (its keys take the next number), a refused one keeps what was typed."""
    n = st.session_state.setdefault(k("form"), 0)
    with st.form("mcp_connect", border=True):
        st.markdown("**Connect an MCP server**")
        left, right = st.columns([1, 2])
        left.text_input("Name (prefixes its tools: name__tool)", key=k(f"name_{n}"), placeholder="crm")
        right.text_input("URL (streamable HTTP endpoint)", key=k(f"url_{n}"), placeholder="https://mcp.example.com/mcp")
        cols = st.columns(3)
        cols[0].text_input("Auth header", key=k(f"auth_header_{n}"), placeholder=DEFAULT_HEADER)
        cols[1].text_input("Auth value template", key=k(f"auth_value_{n}"), placeholder=DEFAULT_VALUE)
        cols[2].text_input("Environment variable with the secret (its NAME)", key=k(f"auth_env_{n}"),
                           placeholder="CRM_MCP_TOKEN")
        st.caption("The secret is never entered or stored here: the server reads it from that environment variable "
                   "when it talks to the MCP server. Leave it empty for a server without auth.")
        submitted = st.form_submit_button("Connect and discover its tools", key="mcp_connect_go", type="primary",
                                          icon=":material/cable:")
    if not submitted:
        return
    typed = {name: st.session_state.get(k(f"{name}_{n}"), "") for name in
             ("name", "url", "auth_header", "auth_value", "auth_env")}
    try:
        with st.spinner("Asking the MCP server for its tools…"):
            count, problems = connect(rt, ctx, **typed)
    except UserError as exc:
        st.error(str(exc))
        return
    connected(typed["name"].strip(), count, problems)
    st.session_state[k("form")] = n + 1
    st.rerun()


def refresh(rt: Runtime, ctx: TenantContext, server: dict) -> None:
    try:
        with st.spinner(f"Asking {server['name']} for its tools…"):
            count, problems = connect(rt, ctx, server["name"], server["url"], server["auth_header"] or "",
                                      server["auth_value"] or "", server["auth_env"] or "")
    except UserError as exc:
        flash("error", f"{server['name']}: {exc}")
    else:
        connected(server["name"], count, problems, again=True)
    st.rerun()


def _disconnect(rt: Runtime, ctx: TenantContext, name: str) -> None:
    try:
        definitions.disconnect_mcp(ctx, rt.store, name)
    except UserError as exc:
        flash("error", str(exc))
        return
    flash("success", f"Disconnected **{md(name)}**: its tools are gone from the agent.")


def tool_row(rt: Runtime, ctx: TenantContext, op: Operation, admin: bool) -> None:
    config = op.config or {}
    hint = "read" if config.get("read_only_hint") == 1 else "write"
    st.session_state[k(f"kind_{op.name}")] = config.get("kind_override") or ""
    st.session_state[k(f"on_{op.name}")] = op.enabled
    cols = st.columns([3, 3.5, 2.5, 1.3], vertical_alignment="center")
    cols[0].markdown(f"`{op.name}`  \n{op.kind} · {'enabled' if op.enabled else ':orange[disabled]'}")
    cols[1].caption(md(op.description) or "—")
    cols[2].selectbox("Kind", ["", "read", "write"], key=k(f"kind_{op.name}"), label_visibility="collapsed",
                      disabled=not admin, on_change=_set_kind, args=(rt, ctx, op.name),
                      format_func=lambda kind: f"{hint} (server's hint)" if kind == "" else f"{kind} (your choice)")
    cols[3].toggle("Enabled", key=k(f"on_{op.name}"), disabled=not admin, on_change=_set_enabled,
                   args=(rt, ctx, op.name))


def server_box(rt: Runtime, ctx: TenantContext, server: dict, tools: list[Operation], admin: bool) -> None:
    with st.container(border=True):
        head = st.columns([5, 1], vertical_alignment="center")
        secret = f" · secret from `{code(server['auth_env'])}`" if server.get("auth_env") else " · no auth"
        when = f" · tools read {stamp(server['refreshed_at'])}" if server.get("refreshed_at") else ""
        head[0].markdown(f"**{md(server['name'])}** · `{code(server['url'])}`{secret}{when}")
        if admin and head[1].button("Refresh", key=k(f"refresh_{server['name']}"), icon=":material/refresh:",
                                    width="stretch", help="Discover its tools again"):
            refresh(rt, ctx, server)
        if not tools:
            st.caption("The server offered no tools.")
        for op in tools:
            tool_row(rt, ctx, op, admin)
        if admin:
            row = st.container(horizontal=True, vertical_alignment="center")
            sure = row.checkbox(f"Yes, disconnect {server['name']}", key=k(f"drop_sure_{server['name']}"))
            row.button("Disconnect", key=k(f"drop_{server['name']}"), icon=":material/link_off:", disabled=not sure,
                       on_click=_disconnect, args=(rt, ctx, server["name"]))


def mcp_servers(rt: Runtime, ctx: TenantContext, ops: list[Operation]) -> None:
    admin = ctx.can("admin")
    show_flash()
    servers = definitions.mcp_servers(ctx, rt.store)
    st.caption("An MCP server's tools become operations named `server__tool`. A tool marked read-only by the server "
               "(readOnlyHint) is a read (live data); every other tool is a write, which the agent can only propose "
               "as a card. Override the kind or switch a tool off per tool.")
    if not admin:
        st.info("Only an admin connects MCP servers and changes their tools; you see them read-only.")
    if not servers:
        st.caption("No MCP server connected.")
    for server in servers:
        tools = [op for op in ops if op.source == OpSource.MCP and (op.config or {}).get("server") == server["name"]]
        server_box(rt, ctx, server, tools, admin)
    if admin:
        connect_form(rt, ctx)
