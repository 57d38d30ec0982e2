"""Tenants (the instance administrator only): every tenant of the data directory, a new tenant, its first users.

Thin: the checks live in :mod:`core.tenancy.instance` (the role, re-read on every call), :mod:`core.tenancy.tenants`
(the slug, as ``python -m core tenants create`` checks it) and :mod:`core.tenancy.members` (e-mail, role, password).
"""
from __future__ import annotations

import streamlit as st

from core.base.errors import UserError
from core.tenancy import instance
from core.tenancy.context import ROLES
from pages import common

PICK_KEY = "tenants_pick"
RESET_KEY = "tenants_reset"  # fields to empty on this run, before their widgets exist (after a success)
flash = common.Flash("tenants_flash")

common.outside_the_app()
rt = common.runtime()
session = common.signed_in(rt)
if session is None or not instance.is_instance_admin(rt.store, session):
    st.error("Only the instance administrator opens Tenants; ask them, or the operator "
             "(`python -m core users instance-admin EMAIL`).")
    st.stop()

for key in st.session_state.pop(RESET_KEY, ()):
    st.session_state[key] = ""
st.title("Tenants")
st.caption("Every tenant of this data directory (also those created with `python -m core tenants create`). "
           "As instance administrator you open each of them as its admin from the Tenant switch in the sidebar; "
           "their admins, editors and QA see only their own tenants.")
flash.show()
tenants = instance.overview(rt.store, session)
st.dataframe([{"Slug": t["slug"], "Name": t["name"], "Members": t["members"], "Admins": t["admins"],
               "Created": t["created_at"][:16].replace("T", " ")} for t in tenants],
             hide_index=True, width="stretch")

new, users = st.columns(2, gap="large")
with new:
    st.subheader("New tenant")
    with st.form("new_tenant"):  # kept on a refusal, so a typo is fixed in place
        name = st.text_input("Name", placeholder="Acme Shop", key="new_tenant_name",
                             help="As customers know the business; change it later in the tenant's Settings.")
        slug = st.text_input("Slug", placeholder="acme-shop", key="new_tenant_slug",
                             help="2-40 lowercase letters, digits or dashes; it names the tenant in the CLI and "
                                  "cannot change.")
        create = st.form_submit_button("Create the tenant", type="primary")
    if create:
        try:
            made = instance.create_tenant(rt.store, session, slug, name)
        except UserError as exc:
            st.error(str(exc))
        else:
            flash.set("success", f"Created tenant '{made['slug']}' ({made['name']}). Add its first admin or editor "
                                 "under *Add a user*; it is in the Tenant switch now.")
            st.session_state[PICK_KEY] = made["slug"]
            st.session_state[RESET_KEY] = ("new_tenant_name", "new_tenant_slug")
            st.rerun()

with users:
    st.subheader("Add a user")
    slugs = [t["slug"] for t in tenants]
    if st.session_state.get(PICK_KEY) not in slugs:
        st.session_state[PICK_KEY] = slugs[0] if slugs else None
    names = {t["slug"]: t["name"] for t in tenants}
    admins = {t["slug"]: t["admins"] for t in tenants}
    pick = st.selectbox("Tenant", slugs, key=PICK_KEY, format_func=lambda s: f"{names[s]} ({s})")
    if pick:
        current = instance.list_members(rt.store, session, pick)
        st.caption("Members: " + (", ".join(f"{m['email']} ({m['role']})" for m in current) or "none yet"))
        if not admins[pick]:
            st.caption("No admin yet: only you administer this tenant. Its first user is usually its admin.")
        with st.form("add_user"):
            email = st.text_input("E-mail", autocomplete="off", key="add_user_email")
            role = st.selectbox("Role", ROLES, index=ROLES.index("editor" if admins[pick] else "admin"))
            password = st.text_input("Initial password (at least 8 characters; an existing account keeps its own)",
                                     type="password", autocomplete="new-password", key="add_user_password")
            add = st.form_submit_button("Add the user", type="primary")
        if add:
            try:
                added = instance.add_user(rt.store, session, pick, email, role, password)
            except UserError as exc:
                st.error(str(exc))
            else:
                flash.set("success", f"{added['email']} is {added['role']} of '{pick}'. They sign in with their "
                                     "e-mail and that password, and see only their own tenants.")
                st.session_state[RESET_KEY] = ("add_user_email", "add_user_password")
                st.rerun()
