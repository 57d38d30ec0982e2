"""What every page of the admin app shares: one runtime per process, the signed-in user, their tenant.

A browser session holds a :class:`core.tenancy.UserSession` (made only by core.tenancy: a password check, the
first-run admin creation, or a session cookie it verified) and the slug of the tenant picked in the sidebar.
Every run re-checks the session's server-side record (:mod:`core.tenancy.sessions`: revoked, idle, expired, user
gone), so a sign-out elsewhere, a password change or a removal ends it at the next click. The session's signed
token lives in the ``cobertura_session_…`` cookie (set and cleared by a components-v2 element in the page), so a
reload signs the user in again from ``st.context.cookies``. Every page asks :func:`context` for its
TenantContext, which re-checks the membership on every run: a tenant slug planted in the session state (or
anywhere else) that the user does not belong to is refused.
"""
from __future__ import annotations

import re

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from core.base.config import ConfigError
from core.demo import init_demo
from core.runtime import Runtime, open_runtime
from core.tenancy import instance, sessions
from core.tenancy.context import (
    AuthError,
    TenancyError,
    TenantContext,
    UserSession,
    authenticate,
    context_for,
    create_first_admin,
    tenants_of,
)
from core.tenancy.tenants import has_users, list_tenants

SESSION_KEY = "user_session"
TENANT_KEY = "tenant"
TENANT_PARAM = "tenant"  # the URL query parameter that names the picked tenant
COOKIE_KEY = "session_cookie"  # the signed token of the live session (kept in server memory, sent as the cookie)
AGE_KEY = "session_cookie_age"  # the cookie's Max-Age: when the session ends if it is not used again
ENDED_KEY = "session_ended"  # why the last session ended, shown once on the sign-in page
REFUSED_KEY = "session_refused"  # a cookie value already refused in this browser session (not checked again)
CLEAR_KEY = "session_cookie_clear"  # the session ended here: clear the cookie (also one set without a reload)

#: page file, title, icon, url path, roles that see it (admin sees everything)
PAGES = [
    ("pages/sources.py", "Sources", ":material/library_books:", "sources", {"editor", "qa"}),
    ("pages/gaps.py", "Gap backlog", ":material/help_center:", "gaps", {"editor"}),
    ("pages/inbox.py", "Inbox", ":material/inbox:", "inbox", {"editor"}),
    ("pages/cards.py", "Cards", ":material/approval:", "cards", {"editor"}),
    ("pages/booking.py", "Booking", ":material/calendar_month:", "booking", {"editor"}),
    ("pages/sandbox.py", "Sandbox", ":material/forum:", "sandbox", {"editor", "qa"}),
    ("pages/qa.py", "QA suites", ":material/fact_check:", "qa", {"qa"}),
    ("pages/actions.py", "Actions", ":material/bolt:", "actions", {"editor"}),
    ("pages/settings.py", "Settings", ":material/settings:", "settings", set()),
]
#: pages only the instance administrator sees (whatever their role in the tenant picked)
INSTANCE_PAGES = [
    ("pages/tenants.py", "Tenants", ":material/domain:", "tenants"),
]

_COOKIE_JS = """
export default function (component) {
  const data = component.data;
  if (!data || !data.name) return;
  const secure = window.location.protocol === "https:" ? "; Secure" : "";
  const value = data.clear ? "" : data.value;
  const age = data.clear ? 0 : data.max_age;
  document.cookie = `${data.name}=${value}; Path=/; Max-Age=${age}; SameSite=Strict${secure}`;
}
"""
_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_.-]+$")  # a JWT: nothing a cookie header could misread


@st.cache_resource(show_spinner=False)
def runtime() -> Runtime:
    """The process's runtime; the first start of an empty data dir creates and trains the demo tenant."""
    rt = open_runtime()
    if not list_tenants(rt.store):
        init_demo(rt)
    rt.backlog.purge_all()  # retention on start (open_runtime does it too; the app owns its schedule)
    return rt


@st.cache_resource(show_spinner=False)
def session_policy() -> sessions.SessionPolicy:
    """The sign-in lifetimes and the cookie secret (created in the data dir on the first start)."""
    return sessions.SessionPolicy.from_settings(runtime().settings)


def open_app() -> Runtime:
    """The runtime; a setting the app cannot use stops it with the setting's own message (no traceback)."""
    with st.spinner("Opening the knowledge base (the first start trains the demo tenant)…"):
        try:
            return runtime()
        except ConfigError as exc:
            st.error(f"The admin app cannot start: {exc}")
            st.stop()


# -- the session: live, restored from the cookie, ended ------------------------------------------------------
def signed_in(rt: Runtime | None = None) -> UserSession | None:
    """This browser session's user: the live session (its record re-checked on every run), else the one the
    session cookie carries (a reload), else None."""
    rt = rt or runtime()
    session = st.session_state.get(SESSION_KEY)
    if isinstance(session, UserSession):
        try:
            st.session_state[AGE_KEY] = sessions.check(rt.store, session, session_policy())
        except AuthError as exc:  # revoked, expired, user gone (or not a session core.tenancy issued)
            forget(str(exc))
            return None
        return session
    cookie = st.context.cookies.get(session_policy().cookie_name)
    if cookie and cookie != st.session_state.get(REFUSED_KEY):
        try:
            opened = sessions.resume(rt.store, cookie, session_policy())
        except AuthError as exc:
            st.session_state[REFUSED_KEY] = cookie
            st.session_state[ENDED_KEY] = str(exc)
            return None
        adopt(opened)
        return opened.session
    return None


def adopt(opened: sessions.Opened) -> None:
    """Keep a session core.tenancy just opened or restored, and the cookie that carries it."""
    st.session_state[SESSION_KEY] = opened.session
    st.session_state[COOKIE_KEY] = opened.cookie
    st.session_state[AGE_KEY] = opened.max_age
    for key in (ENDED_KEY, REFUSED_KEY, CLEAR_KEY):
        st.session_state.pop(key, None)


def forget(why: str = "") -> None:
    """Drop the session from this browser session (the cookie is cleared on this run's page). The cookie this
    browser session opened with is dead too (the same session, or an older one): it is not tried again."""
    for key in (SESSION_KEY, TENANT_KEY, COOKIE_KEY, AGE_KEY):
        st.session_state.pop(key, None)
    st.session_state[REFUSED_KEY] = st.context.cookies.get(session_policy().cookie_name)
    st.session_state[CLEAR_KEY] = True
    if why:
        st.session_state[ENDED_KEY] = why


def sign_out(rt: Runtime, session: UserSession) -> None:
    sessions.end(rt.store, session)  # server-side: the cookie and every copy of it stop working
    forget("You signed out.")
    st.rerun()


def cookie_jar() -> None:
    """Write the session cookie (the live session's token, Max-Age = when it ends unused) or clear a stale one.
    A zero-height element whose script runs in the page whenever what it writes changes."""
    name, value = session_policy().cookie_name, st.session_state.get(COOKIE_KEY)
    if value and isinstance(st.session_state.get(SESSION_KEY), UserSession) and _TOKEN_SHAPE.match(value):
        age = int(st.session_state.get(AGE_KEY) or 0)
        data = {"name": name, "value": value, "max_age": max(age, 1)}
    elif st.session_state.get(CLEAR_KEY) or name in st.context.cookies:
        data = {"name": name, "clear": True}
    else:
        return
    _cookie_element()(data=data, key="session_cookie_jar", height=0)


@st.cache_resource(show_spinner=False)
def _cookie_element():
    """The cookie writer, registered once per process (inside a script run, where Streamlit expects it)."""
    return st.components.v2.component("cobertura_session_cookie", js=_COOKIE_JS)


# -- sign-in -------------------------------------------------------------------------------------------------
def sign_in_page() -> None:
    """First run: create the admin. Later: e-mail and password."""
    rt = runtime()
    st.title("Cobertura")
    if not has_users(rt.store):
        _first_admin(rt)
        return
    st.subheader("Sign in")
    why = st.session_state.pop(ENDED_KEY, None)
    if why:
        st.info(why)
    with st.form("sign_in"):
        email = st.text_input("E-mail", autocomplete="username")
        password = st.text_input("Password", type="password", autocomplete="current-password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        try:
            adopt(sessions.open_session(rt.store, authenticate(rt.store, email, password), session_policy()))
        except AuthError as exc:
            st.error(str(exc))
            return
        st.session_state.pop(TENANT_KEY, None)
        st.rerun()


def _first_admin(rt: Runtime) -> None:
    st.subheader("Create the first admin")
    st.caption("No user exists yet. The first user becomes the instance administrator: admin of every tenant on this "
               f"data directory ({', '.join(t['slug'] for t in list_tenants(rt.store))}) and of those created later, "
               "who creates tenants in the app (Tenants); add editors and QA later in Settings.")
    with st.form("first_admin"):
        email = st.text_input("E-mail", autocomplete="username")
        password = st.text_input("Password (at least 8 characters)", type="password", autocomplete="new-password")
        again = st.text_input("Repeat the password", type="password", autocomplete="new-password")
        submitted = st.form_submit_button("Create admin and sign in", type="primary")
    if submitted:
        if password != again:
            st.error("The two passwords differ; type the same password twice.")
            return
        try:
            adopt(sessions.open_session(rt.store, create_first_admin(rt.store, email, password), session_policy()))
        except (TenancyError, AuthError) as exc:
            st.error(str(exc))
            return
        st.rerun()


def _no_tenant_page() -> None:
    st.title("Cobertura")
    st.info("You are signed in but belong to no tenant yet; ask an admin to add you, then reload.")


def sign_in_pages(session: UserSession | None) -> list:
    """The navigation before sign-in: every page's URL opens the sign-in form (after signing in, the same URL
    opens the page), so a direct link never lands on "Page not found"."""
    body = sign_in_page if session is None else _no_tenant_page
    title = "Sign in" if session is None else "Cobertura"
    urls = [url for _, _, _, url, _ in PAGES] + [url for _, _, _, url in INSTANCE_PAGES]
    return [st.Page(body, title=title, icon=":material/login:", url_path="sign-in", default=True)] + [
        st.Page(body, title=title, icon=":material/login:", url_path=url) for url in urls]


# -- the signed-in frame: tenant switch, pages, account ------------------------------------------------------
def tenant_selector(rt: Runtime, session: UserSession) -> TenantContext | None:
    """The sidebar: the user's tenants only (every tenant for the instance admin), who is signed in, sign out."""
    mine = {t["slug"]: t for t in tenants_of(rt.store, session)}
    if not mine:
        st.sidebar.error(f"{session.email} belongs to no tenant. Ask an admin to add you.")
        if st.sidebar.button("Sign out", icon=":material/logout:"):
            sign_out(rt, session)
        return None
    if st.session_state.get(TENANT_KEY) not in mine:  # a new browser session: the tenant the URL names, if theirs
        named = st.query_params.get(TENANT_PARAM)
        st.session_state[TENANT_KEY] = named if named in mine else next(iter(mine))
    st.sidebar.selectbox("Tenant", list(mine), key=TENANT_KEY,
                         format_func=lambda slug: f"{mine[slug]['name']} ({mine[slug]['role']})")
    st.query_params[TENANT_PARAM] = st.session_state[TENANT_KEY]  # so a reload or a copied URL keeps the tenant
    who = " (instance admin)" if instance.is_instance_admin(rt.store, session) else ""
    st.sidebar.caption(f"Signed in as **{session.email}**{who}")
    if st.sidebar.button("Sign out", icon=":material/logout:"):
        sign_out(rt, session)
    _change_password(rt, session)
    st.sidebar.caption(f"Data directory: `{rt.settings.data_dir}`")
    return context(rt)


def _change_password(rt: Runtime, session: UserSession) -> None:
    with st.sidebar.popover("Change password", icon=":material/key:"):
        with st.form("change_password", clear_on_submit=True):
            current = st.text_input("Current password", type="password", autocomplete="current-password")
            new = st.text_input("New password (at least 8 characters)", type="password", autocomplete="new-password")
            again = st.text_input("Repeat the new password", type="password", autocomplete="new-password")
            submitted = st.form_submit_button("Change password")
        if not submitted:
            return
        if new != again:
            st.error("The two new passwords differ; type the same password twice.")
            return
        try:
            adopt(sessions.change_password(rt.store, session, current, new, session_policy()))
        except AuthError:
            st.error("The current password is wrong; nothing changed.")
            return
        except TenancyError as exc:
            st.error(str(exc))
            return
        st.success("Password changed; every other browser signed in as you was signed out.")


def visible_pages(rt: Runtime, session: UserSession, ctx: TenantContext) -> list:
    """The pages this user may open: by role in the picked tenant, plus Tenants for the instance admin. The URL of
    any other page says why it does not open (a hidden page that renders nothing of it), never "Page not found"."""
    entries = [(path, title, icon, url, allowed(ctx.role, roles)) for path, title, icon, url, roles in PAGES]
    admin = instance.is_instance_admin(rt.store, session)
    entries += [(path, title, icon, url, admin) for path, title, icon, url in INSTANCE_PAGES]
    pages = [st.Page(path, title=title, icon=icon, url_path=url) if ok else
             st.Page(_closed(title, ctx.role if url != "tenants" else "not instance admin"), title=title, icon=icon,
                     url_path=url, visibility="hidden")
             for path, title, icon, url, ok in entries]
    # "/" is a hidden page that opens the first one, so every page keeps its own URL (/sources too)
    first = next(page for page, (*_, ok) in zip(pages, entries) if ok)
    home = st.Page(lambda: st.switch_page(first), title=first.title, icon=first.icon, url_path="home",
                   default=True, visibility="hidden")
    return [home] + pages


def _closed(title: str, role: str):
    def closed() -> None:
        st.title(title)
        st.info(f"{title} is not open to you ({role}); pick a page in the sidebar, or ask an admin.")
    return closed


def allowed(role: str, roles: set[str]) -> bool:
    return role == "admin" or role in roles


def outside_the_app() -> None:
    """Stop a page that Streamlit ran on its own instead of through app.py's frame.

    A folder named ``pages/`` beside app.py makes Streamlit serve its files on their own (legacy file-based
    navigation) until a run of app.py calls ``st.navigation``: a direct URL on a fresh server would run a
    page without the sign-in and the role gate of app.py's navigation. Such a run ends the legacy mode for the
    whole process and runs again, now through app.py (same URL: the sign-in, or the page once signed in)."""
    if PagesManager.uses_pages_directory:  # the legacy navigation ran this file, not app.py
        # replaces the legacy sidebar (every file of pages/) and ends the legacy mode for the whole process
        st.navigation(sign_in_pages(None), position="hidden")
        st.info("Sign in first: open the [start page](/) of the admin app.")
        st.rerun()


def page_context(rt: Runtime) -> TenantContext:
    """The context a page runs under; a page never renders outside app.py's frame."""
    outside_the_app()
    return context(rt)


def context(rt: Runtime) -> TenantContext:
    """The signed-in user's context in the chosen tenant; refuses anything else."""
    session = signed_in(rt)
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
