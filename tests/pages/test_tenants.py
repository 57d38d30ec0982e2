"""The Tenants page and the session in the app's frame (AppTest): only the instance admin gets the page; it creates a
tenant and adds its first users; a sign-in records a server-side session that sign-out revokes, and a session ended
elsewhere (a password change) signs this browser out at its next run."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.tenancy import sessions
from core.tenancy.context import authenticate, create_first_admin
from core.tenancy.tenants import create_tenant, create_user
from pages import common
from tests.apptest import APP, PASSWORD

TENANTS_PAGE = str(Path(APP).parent / "pages" / "tenants.py")


@pytest.fixture
def acme(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    return runtime


def as_user(session, slug: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[common.SESSION_KEY] = session
    at.session_state[common.TENANT_KEY] = slug
    return at


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label == label).click()
    return ok(at.run())


def test_the_instance_admin_creates_a_tenant_and_its_first_editor(acme):
    boss = create_first_admin(acme.store, "boss@acme.test", PASSWORD)
    create_tenant(acme.store, "cli-made", "Made by the CLI")  # after the first run: still the boss's to see
    at = ok(as_user(boss, "acme").run())
    assert at.selectbox(key=common.TENANT_KEY).options == ["Acme (admin)", "Made by the CLI (admin)"]
    ok(at.switch_page("pages/tenants.py").run())
    assert [t.value for t in at.title] == ["Tenants"]
    assert list(at.dataframe[0].value["Slug"]) == ["acme", "cli-made"]
    at.text_input(key="new_tenant_name").set_value("Acme Shop")
    at.text_input(key="new_tenant_slug").set_value("Acme Shop")
    click(at, "Create the tenant")
    assert "is not valid" in at.error[0].value and at.text_input(key="new_tenant_name").value == "Acme Shop"
    at.text_input(key="new_tenant_slug").set_value("acme-shop")
    click(at, "Create the tenant")
    assert any("Created tenant 'acme-shop' (Acme Shop)" in s.value for s in at.success)
    assert at.selectbox(key="tenants_pick").value == "acme-shop"
    assert "Acme Shop (admin)" in at.selectbox(key=common.TENANT_KEY).options  # in the Tenant switch at once
    at.text_input(key="add_user_email").set_value("ed@acme-shop.test")
    role = next(s for s in at.selectbox if s.label == "Role")
    assert role.value == "admin"  # a tenant with no admin: its first user is proposed as admin
    role.set_value("editor")
    at.text_input(key="add_user_password").set_value("editor password")
    click(at, "Add the user")
    assert any("ed@acme-shop.test is editor of 'acme-shop'" in s.value for s in at.success)
    assert [at.text_input(key=k).value for k in ("new_tenant_name", "new_tenant_slug", "add_user_email",
                                                  "add_user_password")] == ["", "", "", ""]  # emptied after success
    editor = ok(as_user(authenticate(acme.store, "ed@acme-shop.test", "editor password"), "acme-shop").run())
    assert editor.selectbox(key=common.TENANT_KEY).options == ["Acme Shop (editor)"]


def test_a_tenant_admin_gets_no_tenants_page_and_sees_only_their_tenant(acme):
    create_first_admin(acme.store, "boss@acme.test", PASSWORD)
    create_tenant(acme.store, "globex", "Globex")
    create_user(acme.store, "globex", "owner@globex.test", PASSWORD, "admin")
    at = ok(as_user(authenticate(acme.store, "owner@globex.test", PASSWORD), "globex").run())
    assert at.selectbox(key=common.TENANT_KEY).options == ["Globex (admin)"]
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("pages/tenants.py")
    direct = AppTest.from_file(TENANTS_PAGE, default_timeout=60)  # the page file run on its own
    direct.session_state[common.SESSION_KEY] = authenticate(acme.store, "owner@globex.test", PASSWORD)
    ok(direct.run())
    assert [e.value for e in direct.error][0].startswith("Only the instance administrator opens Tenants")
    assert not direct.dataframe and not direct.title


def test_sign_in_records_a_session_and_sign_out_revokes_it(acme):
    create_user(acme.store, "acme", "ed@acme.test", PASSWORD, "editor")
    at = ok(AppTest.from_file(str(APP), default_timeout=60).run())
    at.text_input[0].set_value("ed@acme.test")
    at.text_input[1].set_value(PASSWORD)
    ok(at.button[0].click().run())
    session = at.session_state[common.SESSION_KEY]
    cookie = at.session_state[common.COOKIE_KEY]
    policy = common.session_policy()
    assert session.session_id is not None and sessions.resume(acme.store, cookie, policy).session == session
    assert 0 < at.session_state[common.AGE_KEY] <= acme.settings.session_idle_minutes * 60
    ok(at.sidebar.button[0].click().run())  # Sign out
    assert "Sign in" in [s.value for s in at.subheader] and "You signed out." in [i.value for i in at.info]
    with pytest.raises(sessions.SessionEnded, match="signed out"):
        sessions.resume(acme.store, cookie, policy)


def test_a_session_ended_elsewhere_signs_this_browser_out_at_its_next_run(acme):
    create_user(acme.store, "acme", "ed@acme.test", PASSWORD, "editor")
    policy = common.session_policy()
    opened = sessions.open_session(acme.store, authenticate(acme.store, "ed@acme.test", PASSWORD), policy)
    at = ok(as_user(opened.session, "acme").run())
    assert at.selectbox(key=common.TENANT_KEY).options == ["Acme (editor)"]
    sessions.reset_password(acme.store, "ed@acme.test", "changed elsewhere")
    ok(at.run())
    assert "Sign in" in [s.value for s in at.subheader]
    assert any("password reset" in i.value for i in at.info)
    assert common.SESSION_KEY not in at.session_state


def test_the_sign_in_form_lets_password_managers_fill_it(acme):
    create_user(acme.store, "acme", "ed@acme.test", PASSWORD, "editor")
    at = ok(AppTest.from_file(str(APP), default_timeout=60).run())
    assert [t.proto.autocomplete for t in at.text_input] == ["username", "current-password"]


def test_changing_the_password_signs_out_other_browsers_and_keeps_this_one(acme):
    create_user(acme.store, "acme", "ed@acme.test", PASSWORD, "editor")
    policy = common.session_policy()
    here, there = (sessions.open_session(acme.store, authenticate(acme.store, "ed@acme.test", PASSWORD), policy)
                   for _ in range(2))
    at = as_user(here.session, "acme")
    at.session_state[common.COOKIE_KEY] = here.cookie
    ok(at.run())

    def fill(current: str, new: str, again: str) -> AppTest:
        for label, value in (("Current password", current), ("New password (at least 8 characters)", new),
                             ("Repeat the new password", again)):
            next(t for t in at.sidebar.text_input if t.label == label).set_value(value)
        return click(at, "Change password")

    fill("wrong password", "a brand new password", "a brand new password")
    assert "The current password is wrong; nothing changed." in [e.value for e in at.error]
    fill(PASSWORD, "a brand new password", "a different one")
    assert "The two new passwords differ; type the same password twice." in [e.value for e in at.error]
    fill(PASSWORD, "a brand new password", "a brand new password")
    assert any("every other browser signed in as you was signed out" in s.value for s in at.success)
    with pytest.raises(sessions.SessionEnded, match="password changed"):
        sessions.resume(acme.store, there.cookie, policy)
    assert at.session_state[common.COOKIE_KEY] != here.cookie
    assert sessions.resume(acme.store, at.session_state[common.COOKIE_KEY], policy).session.email == "ed@acme.test"
    ok(at.run())
    assert at.selectbox(key=common.TENANT_KEY).options == ["Acme (editor)"]  # this browser stays signed in
