"""The Actions page's HTTP actions: define, edit and delete one in a form, import a JSON file, export them all.

The form holds every field of an action's spec (the JSON import format, README "Actions"). The JSON fields
(parameters, headers, state schema) are parsed here and every spec is validated by the core
(:func:`core.actions.definitions.save_http_action`); an error is shown next to the field it names and nothing is
stored. The secret of the auth header is never entered: the form names the server's environment variable that
holds it, and says whether that variable is set (never its value). Admins change; editors see the form read-only.
"""
from __future__ import annotations

import json
import os
import re

import streamlit as st

from core.actions import definitions
from core.actions.model import Operation, OpSource
from core.base.errors import UserError
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import common
from pages.display import code

PREFIX = "act_"
ERRORS = "act_errors"  # field -> message of the last save
CHOSEN = "act_chosen"  # the action the form edits ("" = a new one)
NEW = ""
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
JSON_FIELDS = ("parameters", "headers", "state_schema")
FIELDS = ("name", "title", "description", "kind", "method", "url", "parameters", "examples", "identified_only",
          "headers", "auth_header", "auth_value", "auth_env", "state_url", "state_schema", "timeout", "enabled")
OPTIONAL = ("headers", "auth_header", "auth_value", "auth_env", "state_url", "state_schema")  # left out when empty
ABOUT = re.compile(r"^Action \d+(?: \(.*?\))?: ([a-z_]+)\b")  # "Action 1 ('x'): parameters is …"
BLANK = {"name": "", "title": "", "description": "", "kind": "read", "method": "GET", "url": "",
         "parameters": {"type": "object", "properties": {}, "required": []}, "examples": [], "identified_only": True,
         "headers": {}, "auth_header": "", "auth_value": "", "auth_env": "", "state_url": "", "state_schema": None,
         "timeout": 10, "enabled": True}

_flash = common.Flash("act_form_flash")
flash, show_flash = _flash.set, _flash.show


def k(name: str) -> str:
    return PREFIX + name


# -- spec <-> widgets -------------------------------------------------------------------------------------------
def load(spec: dict) -> None:
    """Put a spec into the form's widgets."""
    values = {**BLANK, **spec}
    for field in FIELDS:
        value = values[field]
        if field in JSON_FIELDS:
            value = json.dumps(value, indent=2, ensure_ascii=False) if value else ""
        elif field == "examples":
            value = "\n".join(value)
        elif field == "timeout":
            value = float(value)
        st.session_state[k(field)] = value
    st.session_state.pop(ERRORS, None)


def read_form() -> tuple[dict, dict]:
    """The spec the widgets hold, and the JSON fields that do not parse (field -> message)."""
    spec, errors = {}, {}
    for field in FIELDS:
        value = st.session_state.get(k(field), BLANK[field])
        if field in JSON_FIELDS:
            text = str(value or "").strip()
            try:
                value = json.loads(text) if text else None
            except json.JSONDecodeError as exc:
                errors[field] = (f"{field} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                                 "write a JSON object, or leave it empty." if field != "parameters" else
                                 f"parameters is not valid JSON ({exc.msg} at line {exc.lineno}, column "
                                 f"{exc.colno}); write a JSON Schema object such as "
                                 '{"type": "object", "properties": {…}, "required": […]}.')
                continue
        elif field == "examples":
            value = [line.strip() for line in str(value or "").splitlines() if line.strip()]
        elif field == "timeout":
            value = float(value) if float(value) != int(value) else int(value)
        elif isinstance(value, str):
            value = value.strip()
        if field in OPTIONAL and value in ("", None, {}):
            continue
        spec[field] = value
    return spec, errors


def field_of(exc: UserError) -> str:
    """The spec field a core error is about ("" when it names none): the core's messages read
    "Action 1 ('name'): <field> must …" (``definitions.import_specs``); ``parameters.required`` is parameters."""
    named = getattr(exc, "field", None)
    if named in FIELDS:
        return named
    found = ABOUT.match(str(exc))
    return found.group(1) if found and found.group(1) in FIELDS else ""


# -- actions (callbacks: they run before the page redraws, so the errors show beside the fields) ---------------
def _save(rt: Runtime, ctx: TenantContext) -> None:
    spec, errors = read_form()
    if errors:
        st.session_state[ERRORS] = errors
        return
    try:
        op = definitions.save_http_action(ctx, rt.store, spec)
    except UserError as exc:
        st.session_state[ERRORS] = {field_of(exc): str(exc)}
        return
    st.session_state.pop(ERRORS, None)
    st.session_state[CHOSEN] = op.name
    load(definitions.http_spec(ctx, rt.store, op.name) or spec)
    flash("success", f"Saved `{op.name}` ({op.kind}): the agent can use it from the next question"
          + ("." if op.enabled else " once it is enabled."))


def _choose() -> None:
    chosen = st.session_state.get(k("choose"), NEW)
    st.session_state[CHOSEN] = chosen
    ops = st.session_state.get(k("specs"), {})
    load(ops.get(chosen, BLANK))


def _delete(rt: Runtime, ctx: TenantContext, name: str) -> None:
    try:
        definitions.delete_action(ctx, rt.store, name)
    except UserError as exc:
        flash("error", str(exc))
        return
    st.session_state[CHOSEN] = NEW
    st.session_state[k("choose")] = NEW
    load(BLANK)
    flash("success", f"Deleted `{name}`: the agent no longer has it. Cards already proposed with it stay, and "
                     "approving them now fails.")


# -- the form -----------------------------------------------------------------------------------------------------
def error_at(field: str) -> None:
    message = st.session_state.get(ERRORS, {}).get(field)
    if message:
        st.error(message, icon=":material/error:")


def env_status(name: str) -> None:
    name = (name or "").strip()
    if not name:
        st.caption("No secret: the request carries no auth header.")
    elif os.environ.get(name):
        st.caption(f":green[:material/check_circle:] `{code(name)}` is set in the server's environment "
                   "(its value is never shown or stored).")
    else:
        st.caption(f":orange[:material/warning:] `{code(name)}` is **not set** in the server's environment: the "
                   "action fails until the server is started with it.")


def fields(editing: bool, admin: bool) -> None:
    """Every field of the spec, each with its error (if the last save named it) right below it."""
    off = not admin
    st.text_input("Name (the tool name: lowercase letters, digits, _)", key=k("name"), disabled=off or editing,
                  help="3–64 characters, starting with a letter. To rename an action, delete it and define it again.")
    error_at("name")
    st.text_input("Title (for people: the card's title, this page)", key=k("title"), disabled=off)
    error_at("title")
    st.text_area("Description (for the model: what it does, when to use it)", key=k("description"), height=80,
                 disabled=off)
    error_at("description")
    left, right = st.columns(2)
    left.radio("Kind", ["read", "write"], key=k("kind"), horizontal=True, disabled=off,
               help="read: live data the agent may cite. write: a change, only ever through a card a person approves.")
    right.selectbox("Method", METHODS, key=k("method"), disabled=off)
    error_at("kind")
    error_at("method")
    st.text_input("URL template", key=k("url"), disabled=off,
                  placeholder="https://shop.example.com/api/orders/{order_id}",
                  help="{param} from the parameters (URL-quoted), {customer_id} from the identified customer, "
                       "{public_url} = this server's public URL. The other parameters go as the JSON body "
                       "(POST/PUT/PATCH) or the query string (GET/DELETE).")
    error_at("url")
    st.text_area("Parameters (JSON Schema, type object)", key=k("parameters"), height=170, disabled=off)
    error_at("parameters")
    st.text_area("Example phrasings (one per line)", key=k("examples"), height=90, disabled=off,
                 help="How customers ask for it; the offline responder matches them.")
    error_at("examples")
    checks = st.columns(2)
    checks[0].checkbox("Identified customers only", key=k("identified_only"), disabled=off,
                       help="Always on for write actions.")
    checks[1].checkbox("Enabled", key=k("enabled"), disabled=off)
    error_at("identified_only")
    error_at("enabled")
    auth_fields(off)
    st.text_input("State URL (optional GET template: the current state, re-checked at the click)",
                  key=k("state_url"), disabled=off)
    error_at("state_url")
    st.text_area("State schema (optional JSON Schema the state must satisfy to propose and to execute)",
                 key=k("state_schema"), height=110, disabled=off)
    error_at("state_schema")
    st.number_input("Timeout (seconds, at most 30)", min_value=1.0, max_value=30.0, step=1.0, format="%.1f",
                    key=k("timeout"), disabled=off)
    error_at("timeout")


def auth_fields(off: bool) -> None:
    st.text_area("Headers (JSON object, not secret)", key=k("headers"), height=70, disabled=off,
                 placeholder='{"Accept": "application/json"}')
    error_at("headers")
    cols = st.columns(3)
    cols[0].text_input("Auth header", key=k("auth_header"), disabled=off, placeholder="Authorization")
    cols[1].text_input("Auth value template", key=k("auth_value"), disabled=off, placeholder="Bearer {secret}",
                       help="{secret} is replaced by the environment variable's value at call time.")
    cols[2].text_input("Environment variable with the secret (its NAME)", key=k("auth_env"), disabled=off,
                       placeholder="SHOP_API_TOKEN")
    for field in ("auth_header", "auth_value", "auth_env"):
        error_at(field)
    st.caption("The secret itself is never entered or stored here: the server reads it from that environment "
               "variable when it calls the action, and dry runs show it masked.")
    env_status(st.session_state.get(k("auth_env"), ""))


def http_actions(rt: Runtime, ctx: TenantContext, ops: list[Operation]) -> None:
    """The HTTP actions tab: pick one to edit (or a new one), the form, delete, import and export."""
    admin = ctx.can("admin")
    mine = {op.name: definitions.http_spec(ctx, rt.store, op.name) or {} for op in ops if op.source == OpSource.HTTP}
    st.session_state[k("specs")] = mine
    if st.session_state.get(CHOSEN, NEW) not in (NEW, *mine):  # deleted elsewhere, or another tenant's
        st.session_state[CHOSEN] = NEW
    if k("name") not in st.session_state or st.session_state.get(k("tenant")) != ctx.tenant_id:
        st.session_state[k("tenant")] = ctx.tenant_id
        st.session_state[CHOSEN] = NEW
        load(BLANK)
    if not admin:
        st.info("Only an admin defines, edits and deletes actions; you see them read-only.")
    show_flash()
    chosen = st.session_state.get(CHOSEN, NEW)
    st.session_state[k("choose")] = chosen
    st.selectbox("Action", [NEW, *mine], key=k("choose"), on_change=_choose,
                 format_func=lambda name: "➕ A new HTTP action" if name == NEW else f"{name} — {mine[name]['title']}")
    with st.container(border=True):  # no st.form: the secret variable's status follows what is typed
        fields(editing=chosen != NEW, admin=admin)
        error_at("")
        st.button("Save the action" if chosen == NEW else f"Save {chosen}", key="act_save", type="primary",
                  icon=":material/save:", on_click=_save, args=(rt, ctx), disabled=not admin)
    if chosen != NEW and admin:
        row = st.container(horizontal=True, vertical_alignment="center")
        sure = row.checkbox(f"Yes, delete {chosen}", key=k(f"delete_sure_{chosen}"))
        row.button("Delete", key="act_delete", icon=":material/delete:", disabled=not sure, on_click=_delete,
                   args=(rt, ctx, chosen))
    st.divider()
    import_export(rt, ctx, list(mine.values()), admin)


def import_export(rt: Runtime, ctx: TenantContext, specs: list[dict], admin: bool) -> None:
    left, right = st.columns([3, 1], gap="large")
    with left:
        st.markdown("**Import JSON**")
        st.caption("One action object or a list of them, each with the fields of the form above (README, Actions). "
                   "All or nothing: one bad action imports none; an action with an existing name replaces it.")
        upload = st.file_uploader("JSON file", type=["json"], key=k("upload"), disabled=not admin)
        if st.button("Import", key="act_import", icon=":material/upload:", disabled=not admin or upload is None):
            try:
                imported = definitions.import_actions(ctx, rt.store, upload.getvalue().decode("utf-8"))
            except UnicodeDecodeError:
                st.error("The file is not UTF-8 text; save it as UTF-8 JSON and upload it again.")
            except UserError as exc:
                st.error(f"Nothing was imported: {exc}")
            else:
                names = ", ".join(f"`{op.name}`" for op in imported)
                flash("success", f"Imported {len(imported)} action{'s' if len(imported) != 1 else ''}: {names}.")
                st.rerun()
    with right:
        st.download_button("Export JSON", data=json.dumps(specs, indent=2, ensure_ascii=False),
                           key="act_export", file_name=f"actions-{ctx.tenant_slug}.json", mime="application/json",
                           icon=":material/download:", on_click="ignore", width="stretch", disabled=not specs,
                           help="This tenant's HTTP actions, in the import format")

