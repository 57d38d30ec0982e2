"""The Settings page, driven through Streamlit's AppTest (no browser, no network).

The page runs on its own (``AppTest.from_file`` of the page): the runtime is a temporary data dir with the
hashing embedder, and ``common.context`` is replaced by the context of the signed-in user under test.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.agent.factory import make_agent
from core.agent.prompts import message
from core.tenancy import members, settings as tenant_settings
from core.tenancy.context import login
from core.tenancy.tenants import create_tenant, create_user
from pages import common
from tests.fakes import ScriptedProvider

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "settings.py")
PASSWORD = "a long test password"
SECRET = "sk-ant-api03-TestSecretValue0123456789abcdef"




@pytest.fixture
def acme(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    create_user(runtime.store, "acme", "boss@acme.test", PASSWORD, "admin")
    create_user(runtime.store, "acme", "writer@acme.test", PASSWORD, "editor")
    return runtime


def as_user(monkeypatch, rt, email: str):
    ctx = login(rt.store, email, PASSWORD, "acme")
    monkeypatch.setattr(common, "context", lambda _rt: ctx)
    return ctx


def open_page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    ok(at)
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "success", "error", "title",
                                                "code") for e in getattr(at, kind))


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    ok(at)
    return at


def test_an_editor_cannot_see_settings(acme, monkeypatch):
    as_user(monkeypatch, acme, "writer@acme.test")
    at = open_page()
    assert [e.value for e in at.error] == [
        "Only an admin can see the settings of this tenant; you are signed in as editor."]
    assert not at.text_input and not at.button and not at.tabs and not at.dataframe


def test_admin_edits_and_saves_general_and_agent(acme, monkeypatch):
    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    assert at.text_input(key="set_name").value == "Acme"
    assert at.multiselect(key="set_languages").value == ["es", "pt", "en"]
    at.text_input(key="set_name").set_value("Acme Bikes")
    at.multiselect(key="set_languages").set_value(["es", "en"])
    click(at, "save_general")
    saved = tenant_settings.get(ctx, acme.store)
    assert saved.name == "Acme Bikes" and saved.languages == ("es", "en") and saved.updated_by == "boss@acme.test"
    assert "General settings saved." in texts(at)
    at.text_area(key="set_instructions").set_value("Tutea siempre al cliente.")
    at.text_area(key="set_guardrails").set_value("Nunca prometas fechas de entrega.")
    click(at, "save_agent")
    saved = tenant_settings.get(ctx, acme.store)
    assert (saved.instructions, saved.guardrails) == ("Tutea siempre al cliente.", "Nunca prometas fechas de entrega.")
    assert "Tutea siempre al cliente." in "\n".join(c.value for c in at.code)  # the system prompt preview
    # a user error is a message on the page, and nothing is written
    at.text_input(key="set_name").set_value("   ")
    click(at, "save_general")
    assert [e.value for e in at.error] == [
        "The tenant name cannot be empty; write the business's name as customers know it."]
    assert tenant_settings.get(ctx, acme.store).name == "Acme Bikes"
    at.text_area(key="set_instructions").set_value(f"Usa la clave {SECRET} para el CRM.")
    click(at, "save_agent")
    assert "looks like it holds an API key" in at.error[0].value
    assert SECRET not in str(acme.store.query("SELECT settings FROM tenant_settings"))


def test_kill_switch_needs_a_confirmation_and_stops_answers(acme, monkeypatch):
    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    click(at, "kill_ask")
    assert "Switch the assistant off?" in texts(at) and not tenant_settings.get(ctx, acme.store).kill_switch
    click(at, "kill_cancel")
    assert not tenant_settings.get(ctx, acme.store).kill_switch and not at.warning
    click(at, "kill_ask")
    click(at, "kill_on")
    assert tenant_settings.get(ctx, acme.store).kill_switch
    assert "The assistant is switched OFF." in texts(at)
    provider = ScriptedProvider()
    result = acme.turns.run(ctx, make_agent(acme, provider, ctx=ctx), "¿Hacéis envíos a Canarias?")
    assert (result.status, result.answer, result.trace.fault) == ("error", message("switched_off", "es"), "kill_switch")
    assert provider.calls == [] and acme.backlog.gaps(ctx) == []
    click(at, "kill_off")
    assert not tenant_settings.get(ctx, acme.store).kill_switch
    assert "The assistant is on again" in texts(at)


def test_channels_and_catalogs(acme, monkeypatch):
    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    at.checkbox(key="set_channel_web").uncheck()
    click(at, "save_channels")
    assert "web" not in tenant_settings.get(ctx, acme.store).channels_enabled
    assert at.checkbox(key="set_channel_web").value is False

    # AppTest cannot type into st.data_editor: stand in for the admin's edits of the table
    edits = {}

    def data_editor(frame, *, key, **_):
        return edits.get(key.rsplit("_v", 1)[0], frame)

    monkeypatch.setattr(st, "data_editor", data_editor)
    edits["set_sections"] = pd.DataFrame([{"id": "pricing", "description": "The pricing table"},
                                          {"id": None, "description": None}])  # a blank added row is skipped
    click(at, "save_sections")
    assert tenant_settings.get(ctx, acme.store).sections == {"pricing": "The pricing table"}
    assert "Sections of your site saved." in texts(at)
    reasons = {**tenant_settings.REASONS, "billing": "A billing dispute"}
    edits["set_handoff_reasons"] = pd.DataFrame([{"id": i, "description": d} for i, d in reasons.items()])
    click(at, "save_handoff_reasons")
    assert tenant_settings.get(ctx, acme.store).handoff_reasons == reasons
    edits["set_handoff_reasons"] = pd.DataFrame([{"id": "Billing Dispute", "description": "x"}])
    click(at, "save_handoff_reasons")
    assert "is not valid" in at.error[0].value
    assert tenant_settings.get(ctx, acme.store).handoff_reasons == reasons


def test_retention_is_the_backlogs(acme, monkeypatch):
    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    assert at.number_input(key="set_retention").value == 30
    at.number_input(key="set_retention").set_value(7)
    click(at, "save_retention")
    assert acme.backlog.retention_days(ctx) == 7
    assert "Retention saved: private logs 90 days, gap samples 7 days." in texts(at)


def test_privacy_shows_and_edits_the_private_log_retention(acme, monkeypatch):
    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    assert at.number_input(key="set_log_retention").value == 90  # the default, never saved
    at.number_input(key="set_log_retention").set_value(14)
    click(at, "save_retention")
    assert tenant_settings.get(ctx, acme.store).log_retention_days == 14
    assert acme.backlog.retention_days(ctx) == 30
    assert "Retention saved: private logs 14 days, gap samples 30 days." in texts(at)
    assert open_page().number_input(key="set_log_retention").value == 14


def test_provider_section_lists_what_the_environment_has_without_its_keys(environ, monkeypatch, request):
    environ.update({"ANTHROPIC_API_KEY": SECRET})
    rt = request.getfixturevalue("acme")
    ctx = as_user(monkeypatch, rt, "boss@acme.test")
    at = open_page()
    table = next(d.value for d in at.dataframe if "Provider" in d.value.columns)
    assert dict(zip(table["Provider"], table["Available"])) == {"offline": "✓", "anthropic": "✓", "openai": "✗"}
    assert at.selectbox(key="set_provider").options == ["Process default (offline)", "offline", "anthropic"]
    at.selectbox(key="set_provider").set_value("anthropic")
    at.text_input(key="set_model").set_value("claude-haiku-9")
    click(at, "save_provider")
    saved = tenant_settings.get(ctx, rt.store)
    assert (saved.provider, saved.model) == ("anthropic", "claude-haiku-9")
    shown = texts(at) + table.to_string() + "\n".join(str(w.value) for w in [*at.text_input, *at.text_area])
    assert SECRET not in shown and SECRET not in str(rt.store.query("SELECT * FROM tenant_settings"))


def test_users_and_roles(acme, monkeypatch):
    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    people = next(d.value for d in at.dataframe if "E-mail" in d.value.columns)
    assert list(people["E-mail"]) == ["boss@acme.test", "writer@acme.test"]
    at.text_input(key="set_add_email").set_value("Tester@Acme.test")
    at.selectbox(key="set_add_role").set_value("qa")
    at.text_input(key="set_add_password").set_value("short")
    click(at, "add_member")
    assert [e.value for e in at.error] == ["The password must have at least 8 characters."]
    at.text_input(key="set_add_password").set_value(PASSWORD)
    click(at, "add_member")
    assert {m["email"]: m["role"] for m in members.list_members(ctx, acme.store)}["tester@acme.test"] == "qa"
    assert "tester@acme.test added as qa." in texts(at)
    # the last admin can be neither demoted nor removed
    at.selectbox(key="set_member").set_value("boss@acme.test").run()
    at.selectbox(key="set_role_of_boss@acme.test").set_value("editor")
    click(at, "change_role")
    assert "last admin" in at.error[0].value
    at.checkbox(key="set_remove_confirm_boss@acme.test").check().run()
    click(at, "remove_member")
    assert "last admin" in at.error[0].value
    assert {m["email"]: m["role"] for m in members.list_members(ctx, acme.store)}["boss@acme.test"] == "admin"
    # an editor promoted; the tester removed (after confirming)
    at.selectbox(key="set_member").set_value("writer@acme.test").run()
    at.selectbox(key="set_role_of_writer@acme.test").set_value("admin")
    click(at, "change_role")
    assert "writer@acme.test is now admin." in texts(at)
    at.selectbox(key="set_member").set_value("tester@acme.test").run()
    assert at.button(key="remove_member").disabled
    at.checkbox(key="set_remove_confirm_tester@acme.test").check().run()
    click(at, "remove_member")
    assert [m["email"] for m in members.list_members(ctx, acme.store)] == ["boss@acme.test", "writer@acme.test"]


def everything_shown(at: AppTest) -> str:
    """Every value the page sent (texts, code, widget values and labels): what a browser could read."""
    out = []

    def walk(node) -> None:
        for attr in ("value", "label", "body", "placeholder", "help"):
            try:
                out.append(str(getattr(node, attr)))
            except Exception:  # noqa: BLE001 - not every node has every attribute
                pass
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    walk(at.sidebar)
    return "\n".join(out)


def test_website_widget_snippet_shows_the_site_key_and_rotating_changes_it(acme, monkeypatch):
    from core.tenancy import site_keys

    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    keys = site_keys.ensure(ctx, acme.store)
    snippet = f'<script src="http://127.0.0.1:8300/widget.js" data-site-key="{keys.public_key}" defer></script>'
    assert snippet in [c.value for c in at.code]
    click(at, "rotate_key_ask")
    assert "**Rotate the site key?** The snippet on your site stops working at once" in texts(at)
    click(at, "rotate_key_cancel")
    assert site_keys.ensure(ctx, acme.store).public_key == keys.public_key
    click(at, "rotate_key_ask")
    click(at, "rotate_key")
    new = site_keys.ensure(ctx, acme.store)
    assert new.public_key != keys.public_key and new.secret == keys.secret
    assert "the old one no longer works" in texts(at)
    codes = "\n".join(c.value for c in at.code)
    assert f'data-site-key="{new.public_key}"' in codes and keys.public_key not in codes


def test_the_snippet_uses_the_api_host_and_port_of_the_process(environ, monkeypatch, request):
    environ.update({"COBERTURA_API_HOST": "chat.acme.test", "COBERTURA_API_PORT": "8443"})
    rt = request.getfixturevalue("acme")
    as_user(monkeypatch, rt, "boss@acme.test")
    at = open_page()
    assert any(c.value.startswith('<script src="http://chat.acme.test:8443/widget.js" data-site-key="pk_')
               for c in at.code)


def test_the_secret_stays_off_the_page_until_revealed_and_rotates(acme, monkeypatch):
    from core.tenancy import site_keys

    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    secret = site_keys.ensure(ctx, acme.store).secret
    assert secret not in everything_shown(at)
    assert at.toggle(key="set_reveal_secret").value is False
    at.toggle(key="set_reveal_secret").set_value(True).run()
    ok(at)
    assert secret in [c.value for c in at.code]
    click(at, "rotate_secret_ask")
    assert "Every customer token signed with the old secret is refused" in texts(at)
    assert "update your backend and your webhook receiver" in texts(at)
    click(at, "rotate_secret")
    rotated = site_keys.ensure(ctx, acme.store).secret
    assert rotated != secret and rotated in [c.value for c in at.code] and secret not in everything_shown(at)
    at.toggle(key="set_reveal_secret").set_value(False).run()
    ok(at)
    assert rotated not in everything_shown(at)
    # the backend example signs what the API accepts, and explains the webhook signature
    shown = everything_shown(at)
    assert 'jwt.encode({"sub": customer_id, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")' in shown
    assert "X-Cobertura-Signature: sha256=<hex>" in shown and "hmac.compare_digest" in shown


def test_the_handoff_webhook_url_saves_and_a_bad_one_is_refused(acme, monkeypatch):
    ctx = as_user(monkeypatch, acme, "boss@acme.test")
    at = open_page()
    assert at.text_input(key="set_webhook_url").value == ""
    at.text_input(key="set_webhook_url").set_value("ftp://hooks.acme.test/x")
    click(at, "save_webhook")
    assert [e.value for e in at.error] == [
        "The handoff webhook URL 'ftp://hooks.acme.test/x' is not an http(s) URL; write it in full, e.g. "
        "https://example.com/hooks/cobertura."]
    assert tenant_settings.get(ctx, acme.store).handoff_webhook_url == ""
    assert at.text_input(key="set_webhook_url").value == "ftp://hooks.acme.test/x"  # kept to correct it
    at.text_input(key="set_webhook_url").set_value("https://hooks.acme.test/cobertura?token=abc")
    click(at, "save_webhook")
    assert tenant_settings.get(ctx, acme.store).handoff_webhook_url == "https://hooks.acme.test/cobertura?token=abc"
    assert "Handoff webhook saved" in texts(at) and not at.error
    at.text_input(key="set_webhook_url").set_value("")
    click(at, "save_webhook")
    assert tenant_settings.get(ctx, acme.store).handoff_webhook_url == ""
    assert "Handoff webhook removed" in texts(at)
