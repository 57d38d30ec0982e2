"""The admin app's door: first-run admin, sign in, tenant switch, role-gated pages, no way into another tenant."""
from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.base.config import load_settings
from core.runtime import open_runtime
from core.tenancy.tenants import create_tenant, create_user
from pages import common
from tests.apptest import APP, PASSWORD, signed_in
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=HashEmbedder(),
                      tuning=TEST_TUNING)
    create_tenant(rt.store, "acme", "Acme")
    create_tenant(rt.store, "globex", "Globex")
    monkeypatch.setattr(common, "open_runtime", lambda: rt)
    st.cache_resource.clear()
    yield rt
    st.cache_resource.clear()
    rt.close()


def test_first_run_creates_the_admin_then_the_admin_sees_every_page(runtime):
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert "Create the first admin" in [s.value for s in at.subheader]
    at.text_input[0].set_value("boss@acme.test")
    at.text_input[1].set_value(PASSWORD)
    at.text_input[2].set_value("something else")
    at.button[0].click().run()
    assert [e.value for e in at.error] == ["The two passwords differ; type the same password twice."]
    at.text_input[2].set_value(PASSWORD)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key=common.TENANT_KEY).options == ["Acme (admin)", "Globex (admin)"]
    assert "Signed in as **boss@acme.test** (instance admin)" in [c.value for c in at.sidebar.caption]


def test_sign_in_refuses_a_wrong_password_and_accepts_the_right_one(runtime):
    create_user(runtime.store, "acme", "ed@acme.test", PASSWORD, "editor")
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert "Sign in" in [s.value for s in at.subheader]
    at.text_input[0].set_value("ed@acme.test")
    at.text_input[1].set_value("not the password")
    at.button[0].click().run()
    assert [e.value for e in at.error] == ["Wrong e-mail or password."]
    at.text_input[1].set_value(PASSWORD)
    at.button[0].click().run()
    assert not at.exception and at.selectbox(key=common.TENANT_KEY).options == ["Acme (editor)"]


@pytest.mark.parametrize("role, sees, hidden", [
    ("admin", {"Sources", "Gap backlog", "Inbox", "Cards", "Booking", "Sandbox", "QA suites", "Actions", "Settings"},
     set()),
    ("editor", {"Sources", "Gap backlog", "Inbox", "Cards", "Booking", "Sandbox", "Actions"},
     {"QA suites", "Settings"}),
    ("qa", {"Sources", "Sandbox", "QA suites"}, {"Gap backlog", "Inbox", "Cards", "Booking", "Actions", "Settings"}),
])
def test_pages_follow_the_role(runtime, role, sees, hidden):
    from app import PAGES

    at = signed_in(runtime.store, "acme", role).run()
    assert not at.exception, [e.value for e in at.exception]
    for path, title, *_ in PAGES:
        if title in hidden:  # not registered for this role: no widget and no URL opens it
            with pytest.raises(ValueError, match="Could not find a navigation page"):
                at.switch_page(path)
        else:
            assert title in sees
            at.switch_page(path).run()
            assert not at.exception, (title, [e.value for e in at.exception])


def test_another_tenants_slug_in_the_session_is_refused(runtime):
    at = signed_in(runtime.store, "acme", "admin", email="owner@acme.test")
    at.session_state[common.TENANT_KEY] = "globex"  # planted: the user is no member of globex
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key=common.TENANT_KEY).value == "acme"  # back to a tenant of theirs
    assert at.selectbox(key=common.TENANT_KEY).options == ["Acme (admin)"]
    assert "globex" not in " ".join(str(c.value) for c in at.caption)


def test_sign_out_returns_to_the_sign_in_page(runtime):
    at = signed_in(runtime.store, "acme", "editor").run()
    at.sidebar.button[0].click().run()
    assert "Sign in" in [s.value for s in at.subheader]


def test_a_setting_the_app_cannot_use_stops_it_with_the_settings_message(tmp_path, monkeypatch):
    """A bad variable (here COBERTURA_PUBLIC_URL) shows what is wrong and which variable, not a traceback."""
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("COBERTURA_PUBLIC_URL", "chat.example.com")
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    st.cache_resource.clear()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(e.value for e in at.error)
    assert shown.startswith("The admin app cannot start:") and "COBERTURA_PUBLIC_URL" in shown
    assert not (tmp_path / "data").exists()  # nothing was opened or created
