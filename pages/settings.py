"""Settings (admins only): the kill switch, the tenant's name and languages, the agent's instructions and
guardrails, enabled channels, the handoff-reason and section catalogs, retention (private logs and gap
samples), provider and model, the website widget (site key and snippet, signing secret, handoff webhook),
users and roles.

API keys are never entered here: they come from the environment of the process (README, Configuration);
the Provider section only says which providers the environment can run.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.agent import prompts
from core.base.language import DETECTABLE
from core.channels.handoff import REASONS
from core.runtime import Runtime
from core.tenancy import members, settings as tenant_settings
from core.tenancy.context import ROLES, TenantContext
from core.tenancy.settings import TenantSettings
from pages import common
from pages.settings_state import attempt, fill, k, reset_on_tenant_change, saved, show_flash, update
from pages.widget_settings import website_widget

LANGUAGE_NAMES = {"es": "Spanish", "pt": "Portuguese", "en": "English", "fr": "French", "it": "Italian",
                  "de": "German", "ca": "Catalan"}
CHANNEL_HELP = {
    "web": "the public chat widget on your website (refuses what it cannot answer)",
    "identified": "web chat with signed-in customers (hands off to a person after two uncovered questions)",
    "email": "answers to e-mails",
    "sms": "text messages",
    "team": "your team's chat (internal questions)",
    "phone": "phone assistants",
    "sandbox": "the QA sandbox of this app",
}
ROLE_HELP = {"admin": "everything, including these settings", "editor": "knowledge and gap backlog",
             "qa": "sandbox and regression suites"}


# -- kill switch ---------------------------------------------------------------------------------------------
def kill_switch(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    with st.container(border=True):
        if current.kill_switch:
            st.error("**The assistant is switched OFF.** Every question, on every channel, gets a fixed message "
                     f"(“{prompts.message('switched_off', 'en')}”); no provider is called and nothing is logged "
                     "as a gap.",
                     icon=":material/power_off:")
            if st.button("Switch the assistant back on", key="kill_off", type="primary", icon=":material/power:"):
                if attempt(tenant_settings.set_kill_switch, ctx, rt.store, False):
                    saved("The assistant is on again: the next question is answered normally.")
            return
        st.markdown(":green[**The assistant is on.**] The kill switch stops every answer at once, on every channel, "
                    "until an admin switches it back on.")
        if not st.session_state.get(k("kill_confirm")):
            if st.button("Switch the assistant off…", key="kill_ask", icon=":material/power_settings_new:"):
                st.session_state[k("kill_confirm")] = True
                st.rerun()
            return
        st.warning("Switch the assistant off? Customers will get only this message until it is switched back on: "
                   f"“{prompts.message('switched_off', 'en')}” (in their language).")
        left, right = st.columns(2)
        if left.button("Yes, switch it off", key="kill_on", type="primary", width="stretch"):
            st.session_state.pop(k("kill_confirm"), None)
            if attempt(tenant_settings.set_kill_switch, ctx, rt.store, True):
                saved("The assistant is switched off.")
        if right.button("Cancel", key="kill_cancel", width="stretch"):
            st.session_state.pop(k("kill_confirm"), None)
            st.rerun()


# -- sections ------------------------------------------------------------------------------------------------
def general(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    fill("name", current.name)
    fill("languages", list(current.languages))
    with st.form("settings_general"):
        st.text_input("Tenant name", key=k("name"), max_chars=tenant_settings.MAX_NAME,
                      help="How the agent names the business, and how the tenant shows in this app.")
        st.multiselect("Languages the agent serves", list(DETECTABLE), key=k("languages"),
                       format_func=lambda code: f"{LANGUAGE_NAMES.get(code, code)} ({code})",
                       help="The agent answers in the language of each question.")
        submitted = st.form_submit_button("Save", key="save_general", type="primary")
    if submitted and update(rt, ctx, name=st.session_state[k("name")], languages=st.session_state[k("languages")]):
        saved("General settings saved.")


def agent(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    fill("instructions", current.instructions)
    fill("guardrails", current.guardrails)
    st.caption("The built-in rules come first and cannot be overridden: answer only from the knowledge, cite every "
               "claim, abstain when the material does not cover a question. Your instructions and guardrails add "
               "to them.")
    with st.form("settings_agent"):
        st.text_area("Instructions", key=k("instructions"), height=160, max_chars=tenant_settings.MAX_TEXT,
                     placeholder="Tone, who the customers are, what to mention (e.g. “Address customers informally; "
                                 "mention the store's opening hours when relevant.”)")
        st.text_area("Guardrails", key=k("guardrails"), height=160, max_chars=tenant_settings.MAX_TEXT,
                     placeholder="What the agent must never do (e.g. “Never promise delivery dates; never discuss "
                                 "competitors.”)")
        submitted = st.form_submit_button("Save", key="save_agent", type="primary")
    if submitted and update(rt, ctx, instructions=st.session_state[k("instructions")],
                            guardrails=st.session_state[k("guardrails")]):
        saved("Instructions and guardrails saved: the next question uses them.")
    with st.expander("The system prompt the agent gets (for a question in the first language)"):
        language = current.languages[0] if current.languages else "en"
        st.code(prompts.system_prompt(current.name, language, current.instructions, current.guardrails),
                language=None, wrap_lines=True)


def channels(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    for channel in tenant_settings.CHANNELS:
        fill(f"channel_{channel}", channel in current.channels_enabled)
    st.caption("A question on a channel that is not enabled is refused with an error; "
               "the kill switch stops all of them.")
    with st.form("settings_channels"):
        for channel in tenant_settings.CHANNELS:
            st.checkbox(f"**{channel}** — {CHANNEL_HELP.get(channel, '')}", key=k(f"channel_{channel}"))
        submitted = st.form_submit_button("Save", key="save_channels", type="primary")
    if submitted:
        chosen = [c for c in tenant_settings.CHANNELS if st.session_state[k(f"channel_{c}")]]
        if update(rt, ctx, channels_enabled=chosen):
            saved(f"Channels saved: {', '.join(chosen)}.")


def catalog_rows(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """The edited table as (id, description) pairs; fully empty rows (a row added and left blank) are skipped."""
    rows = []
    for record in frame.to_dict("records"):
        ident = "" if pd.isna(record.get("id")) else str(record.get("id")).strip()
        description = "" if pd.isna(record.get("description")) else str(record.get("description")).strip()
        if ident or description:
            rows.append((ident, description))
    return rows


def catalog(rt: Runtime, ctx: TenantContext, field: str, entries: dict, title: str, help_: str) -> None:
    version = st.session_state.setdefault(k(f"{field}_version"), 0)
    frame = pd.DataFrame([{"id": i, "description": d} for i, d in entries.items()], columns=["id", "description"])
    st.markdown(f"**{title}**")
    st.caption(help_)
    with st.form(f"settings_{field}"):
        edited = st.data_editor(
            frame, key=k(f"{field}_v{version}"), num_rows="dynamic", hide_index=True, width="stretch",
            column_config={
                "id": st.column_config.TextColumn("Id", help="lowercase letters, digits, _ or -", required=True),
                "description": st.column_config.TextColumn("Description", width="large", required=True,
                                                           max_chars=tenant_settings.MAX_DESCRIPTION)})
        submitted = st.form_submit_button("Save", key=f"save_{field}", type="primary")
    if submitted and update(rt, ctx, **{field: catalog_rows(edited)}):
        st.session_state[k(f"{field}_version")] = version + 1  # a fresh editor over the saved table
        saved(f"{title} saved.")


def catalogs(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    catalog(rt, ctx, "handoff_reasons", dict(current.handoff_reasons), "Handoff reasons",
            "Why a conversation may be handed to a person (a closed list). The built-in reasons "
            f"({', '.join(REASONS)}) are used by the agent itself: reword them if you like, but keep them.")
    st.divider()
    catalog(rt, ctx, "sections", dict(current.sections), "Sections of your site",
            "Places on your site the agent may point a customer to (e.g. `pricing`, `contact_form`); the widget "
            "decides what an id means (scroll, highlight). Ids not in this list are refused.")


def privacy(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    fill("retention", rt.backlog.retention_days(ctx))
    fill("log_retention", current.log_retention_days)
    low, high = tenant_settings.RETENTION_RANGE
    with st.form("settings_privacy"):
        st.number_input("Keep the private conversation logs for (days)", min_value=low, max_value=high, step=1,
                        key=k("log_retention"))
        st.caption("What customers wrote, unmasked: the turns (question, answer, trace) and conversations, the "
                   "question log, and the transcripts and replies of handoffs. Older records are deleted and "
                   "wiped from the database files (on start, hourly, and with `python -m core purge`).")
        st.number_input("Keep the masked samples of the gap backlog for (days)", min_value=low, max_value=high,
                        step=1, key=k("retention"))
        st.caption("Older samples are deleted; each gap keeps its count, dates, languages and channels.")
        submitted = st.form_submit_button("Save", key="save_retention", type="primary")
    if submitted and attempt(rt.backlog.set_retention_days, ctx, int(st.session_state[k("retention")])) \
            and update(rt, ctx, log_retention_days=int(st.session_state[k("log_retention")])):
        saved(f"Retention saved: private logs {tenant_settings.get(ctx, rt.store).log_retention_days} days, "
              f"gap samples {rt.backlog.retention_days(ctx)} days.")


def provider(rt: Runtime, ctx: TenantContext, current: TenantSettings) -> None:
    process = rt.settings
    available = tenant_settings.available_providers(process)
    st.caption("Keys and endpoints come from the environment of the process only (see Configuration in the README); "
               "they are never entered or stored here.")
    st.dataframe(pd.DataFrame([
        {"Provider": "offline", "Available": "✓", "Environment": "built in: extractive answers from your sources",
         "Default model": "—"},
        {"Provider": "anthropic", "Available": "✓" if "anthropic" in available else "✗",
         "Environment": "ANTHROPIC_API_KEY is set" if process.anthropic_api_key else "ANTHROPIC_API_KEY is not set",
         "Default model": process.anthropic_model or "—"},
        {"Provider": "openai", "Available": "✓" if "openai" in available else "✗",
         "Environment": ("COBERTURA_OPENAI_BASE_URL is set" if process.openai_base_url else
                         "COBERTURA_OPENAI_BASE_URL is not set")
                        + ("; COBERTURA_OPENAI_KEY is set" if process.openai_key else ""),
         "Default model": process.openai_model or "—"},
    ]), hide_index=True, width="stretch")
    default = process.provider or "offline"
    options = ["", *available]
    if current.provider and current.provider not in options:
        options.append(current.provider)
        st.warning(f"This tenant chose **{current.provider}**, which this process's environment cannot run any more; "
                   "its answers fail until you choose another provider or the environment is fixed.")
    labels = {"": f"Process default ({default})"}
    fill("provider", current.provider)
    fill("model", current.model)
    with st.form("settings_provider"):
        st.selectbox("Provider for this tenant", options, key=k("provider"),
                     format_func=lambda name: labels.get(name, name))
        st.text_input("Model (empty = the provider's default above)", key=k("model"),
                      help="Only with anthropic or openai: a model id the provider serves.")
        submitted = st.form_submit_button("Save", key="save_provider", type="primary")
    if submitted and update(rt, ctx, provider=st.session_state[k("provider")], model=st.session_state[k("model")]):
        saved("Provider saved: the next question uses it.")


def users(rt: Runtime, ctx: TenantContext) -> None:
    rows = members.list_members(ctx, rt.store)
    st.dataframe(pd.DataFrame(rows, columns=["email", "role"]).rename(columns={"email": "E-mail", "role": "Role"}),
                 hide_index=True, width="stretch")
    st.caption(" · ".join(f"**{role}**: {text}" for role, text in ROLE_HELP.items()))
    left, right = st.columns(2)
    with left, st.form("settings_add_member", clear_on_submit=False):
        st.markdown("**Add a member**")
        st.text_input("E-mail", key=k("add_email"))
        st.selectbox("Role", ROLES, key=k("add_role"), index=1)
        st.text_input("Password for a new account (8+ characters)", type="password", key=k("add_password"),
                      help="An existing account (a member of another tenant) keeps its own password.")
        submitted = st.form_submit_button("Add", key="add_member", type="primary")
    if submitted:
        email, role = st.session_state[k("add_email")].strip().lower(), st.session_state[k("add_role")]
        if attempt(members.add_member, ctx, rt.store, email, role, st.session_state[k("add_password")]):
            for name in ("add_email", "add_password"):
                st.session_state.pop(k(name), None)
            saved(f"{email} added as {role}. If the e-mail already had an account, its password is unchanged.")
    if not rows:
        return
    with right:
        st.markdown("**Change a role or remove a member**")
        emails = [row["email"] for row in rows]
        if st.session_state.get(k("member")) not in emails:
            st.session_state[k("member")] = emails[0]
        chosen = st.selectbox("Member", emails, key=k("member"))
        role_now = next(row["role"] for row in rows if row["email"] == chosen)
        st.selectbox("New role", ROLES, index=ROLES.index(role_now), key=k(f"role_of_{chosen}"))
        if st.button("Change role", key="change_role"):
            if attempt(members.change_role, ctx, rt.store, chosen, st.session_state[k(f"role_of_{chosen}")]):
                saved(f"{chosen} is now {st.session_state[k(f'role_of_{chosen}')]}.")
        confirm = st.checkbox(f"Yes, remove {chosen} from this tenant", key=k(f"remove_confirm_{chosen}"))
        if st.button("Remove member", key="remove_member", disabled=not confirm):
            if attempt(members.remove_member, ctx, rt.store, chosen):
                saved(f"{chosen} removed from this tenant (their account and other tenants stay).")


# -- website widget ----------------------------------------------------------------------------------------
# -- page ------------------------------------------------------------------------------------------------------
rt = common.open_app()
ctx = common.page_context(rt)
if not ctx.can("admin"):
    st.error(f"Only an admin can see the settings of this tenant; you are signed in as {ctx.role}.")
    st.stop()
reset_on_tenant_change(ctx)
current = tenant_settings.get(ctx, rt.store)
st.title("Settings")
if current.updated_at:
    st.caption(f"Last changed {current.updated_at} by {current.updated_by}.")
show_flash()
kill_switch(rt, ctx, current)
tabs = st.tabs(["General", "Agent", "Channels", "Catalogs", "Privacy", "Provider", "Website widget", "Users & roles"])
with tabs[0]:
    general(rt, ctx, current)
with tabs[1]:
    agent(rt, ctx, current)
with tabs[2]:
    channels(rt, ctx, current)
with tabs[3]:
    catalogs(rt, ctx, current)
with tabs[4]:
    privacy(rt, ctx, current)
with tabs[5]:
    provider(rt, ctx, current)
with tabs[6]:
    website_widget(rt, ctx, current)
with tabs[7]:
    users(rt, ctx)
