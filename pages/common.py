"""What every page of the admin app shares: one runtime per process, the signed-in user, their tenant.

A browser session holds a :class:`core.tenancy.UserSession` (made only by a password check or by the
first-run admin creation) and the slug of the tenant picked in the sidebar. Every page asks
:func:`context` for its TenantContext, which re-checks the membership on every run: a tenant slug
planted in the session state (or anywhere else) that the user does not belong to is refused.
"""
from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from core.demo import init_demo
from core.runtime import Runtime, open_runtime
from core.tenancy.context import (
    AuthError,
    TenancyError,
    TenantContext,
    UserSession,
    authenticate,
    context_for,
    create_first_admin,
)
from core.tenancy.tenants import has_users, list_tenants, memberships

SESSION_KEY = "user_session"
TENANT_KEY = "tenant"


@st.cache_resource(show_spinner=False)
def runtime() -> Runtime:
    """The process's runtime; the first start of an empty data dir creates and trains the demo tenant."""
    rt = open_runtime()
    if not list_tenants(rt.store):
        init_demo(rt)
    rt.backlog.purge_all()  # retention on start (open_runtime does it too; the app owns its schedule)
    return rt


def open_app() -> Runtime:
    with st.spinner("Opening the knowledge base (the first start trains the demo tenant)…"):
        return runtime()


def signed_in() -> UserSession | None:
    session = st.session_state.get(SESSION_KEY)
    return session if isinstance(session, UserSession) else None


def sign_in_page() -> None:
    """First run: create the admin. Later: e-mail and password."""
    rt = runtime()
    st.title("Cobertura")
    if not has_users(rt.store):
        st.subheader("Create the first admin")
        st.caption("No user exists yet. The first user becomes the admin of every tenant on this data directory "
                   f"({', '.join(t['slug'] for t in list_tenants(rt.store))}); add editors and QA later in Settings.")
        with st.form("first_admin"):
            email = st.text_input("E-mail")
            password = st.text_input("Password (at least 8 characters)", type="password")
            again = st.text_input("Repeat the password", type="password")
            submitted = st.form_submit_button("Create admin and sign in", type="primary")
        if submitted:
            if password != again:
                st.error("The two passwords differ; type the same password twice.")
                return
            try:
                st.session_state[SESSION_KEY] = create_first_admin(rt.store, email, password)
            except (TenancyError, AuthError) as exc:
                st.error(str(exc))
                return
            st.rerun()
        return
    st.subheader("Sign in")
    with st.form("sign_in"):
        email = st.text_input("E-mail")
        password = st.text_input("Password", type="password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        try:
            st.session_state[SESSION_KEY] = authenticate(rt.store, email, password)
        except AuthError as exc:
            st.error(str(exc))
            return
        st.session_state.pop(TENANT_KEY, None)
        st.rerun()


def tenant_selector(rt: Runtime, session: UserSession) -> TenantContext | None:
    """The sidebar: the user's tenants only (with their role), who is signed in, sign out."""
    mine = {m["slug"]: m for m in memberships(rt.store, session.email)}
    if not mine:
        st.sidebar.error(f"{session.email} belongs to no tenant. Ask an admin to add you.")
        return None
    if st.session_state.get(TENANT_KEY) not in mine:
        st.session_state[TENANT_KEY] = next(iter(mine))
    st.sidebar.selectbox("Tenant", list(mine), key=TENANT_KEY,
                         format_func=lambda slug: f"{mine[slug]['name']} ({mine[slug]['role']})")
    st.sidebar.caption(f"Signed in as **{session.email}**")
    if st.sidebar.button("Sign out", icon=":material/logout:"):
        st.session_state.pop(SESSION_KEY, None)
        st.session_state.pop(TENANT_KEY, None)
        st.rerun()
    st.sidebar.caption(f"Data directory: `{rt.settings.data_dir}`")
    return context(rt)


#: page file, title, icon, url path, roles that see it (admin sees everything)
PAGES = [
    ("pages/sources.py", "Sources", ":material/library_books:", "sources", {"editor", "qa"}),
    ("pages/gaps.py", "Gap backlog", ":material/help_center:", "gaps", {"editor"}),
    ("pages/inbox.py", "Inbox", ":material/inbox:", "inbox", {"editor"}),
    ("pages/sandbox.py", "Sandbox", ":material/forum:", "sandbox", {"editor", "qa"}),
    ("pages/qa.py", "QA suites", ":material/fact_check:", "qa", {"qa"}),
    ("pages/settings.py", "Settings", ":material/settings:", "settings", set()),
]


def allowed(role: str, roles: set[str]) -> bool:
    return role == "admin" or role in roles


def page_context(rt: Runtime) -> TenantContext:
    """The context a page runs under; a page never renders outside app.py's frame.

    A folder named ``pages/`` beside app.py makes Streamlit serve its files on their own (legacy file-based
    navigation) until a run of app.py calls ``st.navigation``: a direct URL on a fresh server would run a
    page without the sign-in and the role gate of app.py's navigation. A page run that way shows only the
    way to sign in and stops."""
    if PagesManager.uses_pages_directory:  # the legacy navigation ran this file, not app.py
        # replaces the legacy sidebar (every file of pages/) and ends the legacy mode for the whole process
        st.navigation([st.Page(sign_in_page, title="Sign in")], position="hidden")
        st.info("Sign in first: open the [start page](/) of the admin app.")
        st.stop()
    return context(rt)


def context(rt: Runtime) -> TenantContext:
    """The signed-in user's context in the chosen tenant; refuses anything else."""
    session = signed_in()
    if session is None:
        raise AuthError("Sign in first.")
    return context_for(rt.store, session, str(st.session_state.get(TENANT_KEY) or ""))


class Flash:
    """Messages an action leaves for the next run of its page (a callback runs before the page redraws)."""

    def __init__(self, key: str):
        self.key = key

    def set(self, kind: str, message: str) -> None:
        """Queue ``message`` for ``st.<kind>`` (success, info, warning, error)."""
        st.session_state.setdefault(self.key, []).append((kind, message))

    def show(self) -> None:
        for kind, message in st.session_state.pop(self.key, []):
            getattr(st, kind)(message)
