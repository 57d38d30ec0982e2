"""Tenant settings (S2) and members (S1): validation, admin-only changes, tenant isolation, and how the
settings reach the agent (prompt, kill switch, channels, provider and model), with a scripted provider."""
from __future__ import annotations

import dataclasses

import pytest

from core.agent import prompts
from core.agent.factory import TenantPrompt, make_agent
from core.agent.providers.chain import ProviderChain
from core.agent.providers.offline import OfflineResponder
from core.base.config import ConfigError, load_settings
from core.channels.conversations import CHANNELS
from core.channels.handoff import REASONS
from core.knowledge import sources
from core.tenancy import members, settings as tenant_settings
from core.tenancy.context import AuthError, TenancyError, login
from core.tenancy.members import MemberError
from core.tenancy.settings import ChannelDisabled, TenantSettingsError
from core.tenancy.tenants import create_user
from tests.fakes import ScriptedProvider

PASSWORD = "a long test password"
RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la entrega."
KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"


def member(rt, slug: str, email: str, role: str):
    create_user(rt.store, slug, email, PASSWORD, role)
    return login(rt.store, email, PASSWORD, slug)


def process(**env):
    return load_settings({"COBERTURA_DATA_DIR": "/tmp/unused", **env})


# -- the settings -----------------------------------------------------------------------------------------
def test_defaults_then_update_and_read_back(ctx, rt):
    current = tenant_settings.get(ctx, rt.store)
    assert current == tenant_settings.TenantSettings(name="Acme")
    assert current.languages == ("es", "pt", "en") and current.channels_enabled == CHANNELS
    assert current.handoff_reasons == REASONS and current.sections == {} and not current.kill_switch
    assert (current.provider, current.model, current.updated_at) == ("", "", None)

    saved = tenant_settings.update(
        ctx, rt.store, name="  Acme Bikes ", instructions="Tutea al cliente.",
        guardrails="Nunca hables de la competencia.", languages=["ES", "en", "es"], channels_enabled=["email", "web"],
        handoff_reasons={**REASONS, "billing": "A billing dispute"}, sections=[("pricing", "The pricing table")],
        kill_switch=True, provider="offline")
    assert saved.name == "Acme Bikes" and saved.languages == ("es", "en")
    assert saved.channels_enabled == ("web", "email")  # catalog order
    assert (saved.handoff_reasons["billing"] == "A billing dispute"
            and saved.sections == {"pricing": "The pricing table"})
    assert saved.kill_switch and saved.provider == "offline" and saved.updated_by == "cli:operator" and saved.updated_at
    assert rt.store.query("SELECT name FROM tenants WHERE id = ?", [ctx.tenant_id])[0]["name"] == "Acme Bikes"
    assert tenant_settings.get(ctx, rt.store) == saved
    assert tenant_settings.update(ctx, rt.store, kill_switch=False).instructions == "Tutea al cliente."  # partial


@pytest.mark.parametrize("changes, error", [
    ({"languages": ["es", "xx"]}, "Unknown language 'xx'"),
    ({"languages": []}, "at least one language"),
    ({"languages": "es"}, "list of codes"),
    ({"channels_enabled": ["web", "fax"]}, "Unknown channel 'fax'"),
    ({"channels_enabled": []}, "use the kill switch"),
    ({"sections": {"Pricing Table": "x"}}, "section id 'Pricing Table' is not valid"),
    ({"sections": {"pricing": ""}}, "needs a description"),
    ({"sections": [("a", "x"), ("a", "y")]}, "appears twice"),
    ({"handoff_reasons": {"billing": "x"}}, "built-in handoff reason 'not_covered_twice'"),
    ({"instructions": "x" * 4001}, "4,001 characters; the limit is 4,000"),
    ({"guardrails": 7}, "must be text"),
    ({"name": ""}, "cannot be empty"),
    ({"kill_switch": "yes"}, "on or off"),
    ({"provider": "gemini"}, "Provider 'gemini' is not known"),
    ({"provider": "anthropic"}, "ANTHROPIC_API_KEY is not set"),
    ({"model": "gpt-9"}, "only be chosen with the anthropic or openai provider"),
    ({"colour": "red"}, "Unknown setting 'colour'"),
    ({"anthropic_api_key": KEY}, "read from the environment only"),
    ({"instructions": f"Use {KEY} for the CRM"}, "looks like it holds an API key"),
    ({"guardrails": "Authorization: Bearer abcdefghijklmnop1234"}, "looks like it holds an API key"),
    ({"sections": {"crm": "token Zx81QmP02LkR7vB3nT9wYc4Hs6Ja5Ue1"}}, "looks like it holds an API key"),
])
def test_every_value_is_checked_and_nothing_is_written_on_an_error(ctx, rt, changes, error):
    with pytest.raises(TenantSettingsError, match=error):
        tenant_settings.update(ctx, rt.store, process=process(), **changes)
    assert rt.store.query("SELECT * FROM tenant_settings") == []
    assert tenant_settings.get(ctx, rt.store) == tenant_settings.TenantSettings(name="Acme")


def test_the_value_of_a_key_in_the_environment_is_refused_wherever_it_appears(ctx, rt):
    short_key = "plainkey42"  # no tell-tale shape: only the environment knows it is a key
    env = process(COBERTURA_PROVIDER="openai", COBERTURA_OPENAI_BASE_URL="http://127.0.0.1:9/v1",
                  COBERTURA_OPENAI_MODEL="tiny", COBERTURA_OPENAI_KEY=short_key)
    with pytest.raises(TenantSettingsError, match="a key configured in this process's environment"):
        tenant_settings.update(ctx, rt.store, process=env, instructions=f"El CRM usa {short_key}.")
    # ordinary text with codes, URLs and long slugs is fine
    text = "Pedidos BIKE-2024-ELECTRIC-PRO-X en https://acme.example/Seguimiento/Pedido?id=12345 con código ES-1234."
    assert tenant_settings.update(ctx, rt.store, process=env, instructions=text).instructions == text


def test_only_an_admin_changes_settings_but_everyone_of_the_tenant_reads_them(ctx, rt):
    editor = member(rt, "acme", "writer@acme.test", "editor")
    qa = member(rt, "acme", "qa@acme.test", "qa")
    for who in (editor, qa):
        with pytest.raises(AuthError, match="Only an admin"):
            tenant_settings.update(who, rt.store, kill_switch=True)
    admin = member(rt, "acme", "boss@acme.test", "admin")
    tenant_settings.update(admin, rt.store, instructions="Sé breve.")
    assert tenant_settings.get(editor, rt.store).instructions == "Sé breve."


def test_another_tenants_settings_answer_like_defaults(ctx, other_ctx, rt):
    before = tenant_settings.get(other_ctx, rt.store)
    tenant_settings.update(ctx, rt.store, name="Acme Bikes", instructions="Secret playbook", kill_switch=True,
                           channels_enabled=["email"], sections={"pricing": "Prices"})
    assert tenant_settings.get(other_ctx, rt.store) == before == tenant_settings.TenantSettings(name="Globex")
    tenant_settings.update(other_ctx, rt.store, guardrails="Globex only")
    assert tenant_settings.get(ctx, rt.store).guardrails == "" and tenant_settings.get(ctx, rt.store).kill_switch
    assert rt.turns.admit(other_ctx, "hola", "web").settings.channels_enabled == CHANNELS


def test_a_stored_value_a_newer_release_no_longer_accepts_falls_back_gracefully(ctx, rt):
    import json

    tenant_settings.update(ctx, rt.store, handoff_reasons={**REASONS, "billing": "Billing"})
    stored = {"channels_enabled": ["web", "fax"], "handoff_reasons": {"billing": "Billing"}, "languages": "??",
              "instructions": "Hola"}
    with rt.store.write() as db:
        db.execute("UPDATE tenant_settings SET settings = ? WHERE tenant_id = ?", [json.dumps(stored), ctx.tenant_id])
    current = tenant_settings.get(ctx, rt.store)
    assert current.channels_enabled == ("web",) and current.handoff_reasons == {**REASONS, "billing": "Billing"}
    assert current.languages == tenant_settings.DEFAULT_LANGUAGES and current.instructions == "Hola"


def test_providers_available_are_what_the_environment_configures():
    assert tenant_settings.available_providers(process()) == {"offline": ""}
    env = process(ANTHROPIC_API_KEY=KEY, COBERTURA_OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    available = tenant_settings.available_providers(env)
    assert available == {"offline": "", "anthropic": "claude-sonnet-5-5", "openai": ""}
    assert KEY not in repr(available)


def test_provider_and_model_choice_is_checked_against_the_environment(ctx, rt):
    env = process(ANTHROPIC_API_KEY=KEY, COBERTURA_OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    with pytest.raises(TenantSettingsError, match="COBERTURA_OPENAI_MODEL is not set"):
        tenant_settings.update(ctx, rt.store, process=env, provider="openai")
    saved = tenant_settings.update(ctx, rt.store, process=env, provider="openai", model="llama3.1:8b")
    assert (saved.provider, saved.model) == ("openai", "llama3.1:8b")
    # another provider without a model: the old model (of the old provider) goes
    saved = tenant_settings.update(ctx, rt.store, process=env, provider="anthropic")
    assert (saved.provider, saved.model) == ("anthropic", "")
    assert KEY not in str(rt.store.query("SELECT * FROM tenant_settings"))


# -- how the settings reach the agent -----------------------------------------------------------------------
@pytest.fixture
def kb(ctx, rt):
    sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    rt.index.train(ctx)
    return ctx


def test_name_instructions_and_guardrails_reach_the_system_prompt(kb, rt):
    tenant_settings.update(kb, rt.store, name="Acme Bikes", instructions="Tutea al cliente.",
                           guardrails="Nunca prometas fechas.")
    provider = ScriptedProvider("Nuestro material no cubre este punto.", "Nuestro material no cubre este punto.")
    result = rt.turns.run(kb, make_agent(rt, provider, ctx=kb), "¿Vendéis patinetes?")
    assert result.status in ("abstained", "answered")
    expected = prompts.system_prompt("Acme Bikes", "es", "Tutea al cliente.", "Nunca prometas fechas.")
    assert provider.calls[0]["system"] == expected
    assert expected.index("These rules come first") < expected.index("Tutea al cliente.")  # rules rank above
    # without instructions the provider is not wrapped and the prompt is the built-in rules alone
    tenant_settings.update(kb, rt.store, instructions="", guardrails="")
    plain = ScriptedProvider("No lo sé.", "No lo sé.")
    agent = make_agent(rt, plain, ctx=kb)
    assert not isinstance(agent.provider, TenantPrompt)
    rt.turns.run(kb, agent, "¿Vendéis patinetes?")
    assert plain.calls[0]["system"] == prompts.system_prompt("Acme Bikes", "es")


def test_an_agent_built_for_one_tenant_refuses_another(kb, other_ctx, rt):
    with pytest.raises(AuthError, match="another tenant"):
        rt.turns.run(other_ctx, make_agent(rt, ScriptedProvider(), ctx=kb), "hola")


@pytest.mark.parametrize("question, language", [("¿Puedo devolver un producto?", "es"),
                                                ("Can I return a product?", "en"),
                                                ("Posso devolver um produto comprado?", "pt")])
def test_the_kill_switch_answers_a_fixed_message_and_calls_nothing(kb, rt, question, language):
    tenant_settings.set_kill_switch(kb, rt.store, True)
    provider = ScriptedProvider()
    result = rt.turns.run(kb, make_agent(rt, provider, ctx=kb), question, channel="identified")
    assert result.status == "error" and result.answer == prompts.message("switched_off", language)
    assert result.trace.fault == "kill_switch" and result.language == language
    assert provider.calls == [] and result.citations == [] and result.gap_id is None
    assert rt.backlog.gaps(kb) == [] and rt.store.query("SELECT * FROM turns") == []
    assert rt.store.query("SELECT id FROM read_log WHERE tenant_id = ?", [kb.tenant_id]) == []  # no tool ran
    tenant_settings.set_kill_switch(kb, rt.store, False)
    again = rt.turns.run(kb, make_agent(rt, ScriptedProvider("No lo sé.", "No lo sé."), ctx=kb), question)
    assert again.trace.fault != "kill_switch"


def test_the_kill_switch_applies_to_any_agent_of_the_tenant_but_not_to_dry_runs(kb, other_ctx, rt):
    from core.agent.loop import Agent
    from core.agent.protocol import Dialogue

    tenant_settings.set_kill_switch(kb, rt.store, True)
    assert rt.turns.run(kb, Agent(rt, ScriptedProvider()), "¿Puedo devolver un producto?").trace.fault == "kill_switch"
    # another tenant keeps answering
    other = rt.turns.run(other_ctx, Agent(rt, ScriptedProvider("Hola.", "Hola.")), "Hola")
    assert other.trace.fault != "kill_switch"
    replay = ScriptedProvider("No lo sé.", "No lo sé.")
    # gap replay (Agent.answer alone): an editor's check, not an answer to a customer
    dry = Agent(rt, replay).answer(kb, Dialogue("sandbox"), "¿Cuál es el plazo para devolver un producto?")
    assert dry.trace.fault != "kill_switch" and replay.calls


def test_a_channel_that_is_not_enabled_is_refused(kb, rt):
    first = rt.turns.run(kb, make_agent(rt, ScriptedProvider("Hola.", "Hola."), ctx=kb), "Hola", channel="email")
    gaps = rt.backlog.gaps(kb)
    tenant_settings.update(kb, rt.store, channels_enabled=["web", "identified"])
    provider = ScriptedProvider()
    agent = make_agent(rt, provider, ctx=kb)
    with pytest.raises(ChannelDisabled, match="The channel 'email' is not enabled for this tenant"):
        rt.turns.run(kb, agent, "¿Puedo devolver un producto?", channel="email")
    with pytest.raises(ChannelDisabled, match="'email' is not enabled"):  # the conversation keeps its channel
        rt.turns.run(kb, agent, "¿Y el plazo?", conversation_id=first.conversation_id)
    assert provider.calls == [] and rt.backlog.gaps(kb) == gaps
    provider.enqueue("Hola.", "Hola.")
    assert rt.turns.run(kb, agent, "Hola", channel="web").status in ("answered", "abstained")


def test_the_tenants_provider_and_model_are_chosen_among_the_environments(kb, tmp_path, monkeypatch):
    from core.runtime import open_runtime
    from tests.conftest import TEST_TUNING
    from tests.fakes import HashEmbedder

    env = load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "env"), "COBERTURA_PROVIDER": "anthropic",
                         "ANTHROPIC_API_KEY": KEY, "COBERTURA_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                         "COBERTURA_OPENAI_MODEL": "llama3.1"})
    rt = open_runtime(env, embedder=HashEmbedder(), tuning=TEST_TUNING)
    try:
        from core.tenancy.context import local_operator
        from core.tenancy.tenants import create_tenant

        create_tenant(rt.store, "acme", "Acme")
        ctx = local_operator(rt.store, "acme")
        sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
        rt.index.train(ctx)
        built = []
        scripted = ScriptedProvider()

        def build_provider(settings):
            built.append(settings)
            return ProviderChain([scripted]) if settings.provider_chain else None

        monkeypatch.setattr("core.agent.providers.chain.build_provider", build_provider)
        make_agent(rt, ctx=ctx)
        assert built[-1].provider_chain == ("anthropic",)  # the process default
        tenant_settings.update(ctx, rt.store, process=rt.settings, provider="openai", model="qwen2.5:7b",
                               instructions="Sé breve.")
        agent = make_agent(rt, ctx=ctx)
        assert built[-1].provider_chain == ("openai",) and built[-1].openai_model == "qwen2.5:7b"
        assert built[-1].anthropic_api_key == KEY  # keys stay the environment's, never the database's
        scripted.enqueue(("search_knowledge", {"query": "plazo devolución"}), "No lo sé.", "No lo sé.")
        rt.turns.run(ctx, agent, "¿Cuál es el plazo para devolver un producto?")
        assert scripted.calls and scripted.calls[0]["system"].endswith("Sé breve.")
        assert [p.name for p in agent.provider.inner.providers] == ["scripted", "offline"]  # offline still last
        tenant_settings.update(ctx, rt.store, process=rt.settings, provider="offline")
        assert isinstance(make_agent(rt, ctx=ctx).provider.inner, OfflineResponder)
        # the environment lost what the tenant chose: a clear configuration error, not a silent switch
        tenant_settings.update(ctx, rt.store, process=rt.settings, provider="anthropic")
        narrowed = dataclasses.replace(rt.settings, anthropic_api_key="")
        monkeypatch.setattr(rt, "settings", narrowed)
        with pytest.raises(ConfigError, match="choose anthropic, which this process cannot run: .*ANTHROPIC_API_KEY"):
            make_agent(rt, ctx=ctx)
    finally:
        rt.close()


# -- members ---------------------------------------------------------------------------------------------
def test_members_list_add_change_remove(ctx, rt):
    admin = member(rt, "acme", "boss@acme.test", "admin")
    assert members.list_members(admin, rt.store) == [{"email": "boss@acme.test", "role": "admin"}]
    members.add_member(admin, rt.store, " Writer@Acme.test ", "editor", PASSWORD)
    members.add_member(admin, rt.store, "qa@acme.test", "qa", PASSWORD)
    assert [(m["email"], m["role"]) for m in members.list_members(admin, rt.store)] == [
        ("boss@acme.test", "admin"), ("writer@acme.test", "editor"), ("qa@acme.test", "qa")]
    assert login(rt.store, "writer@acme.test", PASSWORD, "acme").role == "editor"
    with pytest.raises(MemberError, match="already a member \\(editor\\); change their role instead"):
        members.add_member(admin, rt.store, "writer@acme.test", "admin", PASSWORD)  # never a silent role change
    with pytest.raises(TenancyError, match="at least 8 characters"):
        members.add_member(admin, rt.store, "new@acme.test", "qa", "short")
    with pytest.raises(TenancyError, match="not an e-mail"):
        members.add_member(admin, rt.store, "nobody", "qa", PASSWORD)
    with pytest.raises(MemberError, match="Role 'owner' is not known"):
        members.add_member(admin, rt.store, "new@acme.test", "owner", PASSWORD)
    members.change_role(admin, rt.store, "qa@acme.test", "editor")
    members.remove_member(admin, rt.store, "writer@acme.test")
    assert [m["email"] for m in members.list_members(admin, rt.store)] == ["boss@acme.test", "qa@acme.test"]
    with pytest.raises(AuthError):
        login(rt.store, "writer@acme.test", PASSWORD, "acme")
    with pytest.raises(MemberError, match="not a member"):
        members.change_role(admin, rt.store, "writer@acme.test", "qa")


def test_the_last_admin_is_never_removed_or_demoted(ctx, rt):
    admin = member(rt, "acme", "boss@acme.test", "admin")
    for change in (lambda: members.change_role(admin, rt.store, "boss@acme.test", "editor"),
                   lambda: members.remove_member(admin, rt.store, "boss@acme.test")):
        with pytest.raises(MemberError, match="last admin of this tenant; make another member admin first"):
            change()
    members.add_member(admin, rt.store, "second@acme.test", "admin", PASSWORD)
    members.change_role(admin, rt.store, "boss@acme.test", "editor")  # now there is another admin
    second = login(rt.store, "second@acme.test", PASSWORD, "acme")
    with pytest.raises(MemberError, match="last admin"):
        members.remove_member(second, rt.store, "second@acme.test")


def test_only_admins_manage_members(ctx, rt):
    editor = member(rt, "acme", "writer@acme.test", "editor")
    for call in (lambda: members.list_members(editor, rt.store),
                 lambda: members.add_member(editor, rt.store, "x@acme.test", "admin", PASSWORD),
                 lambda: members.change_role(editor, rt.store, "writer@acme.test", "admin"),
                 lambda: members.remove_member(editor, rt.store, "writer@acme.test")):
        with pytest.raises(AuthError, match="Only an admin"):
            call()
    assert login(rt.store, "writer@acme.test", PASSWORD, "acme").role == "editor"


def test_members_are_tenant_scoped(ctx, other_ctx, rt):
    admin = member(rt, "acme", "boss@acme.test", "admin")
    globex_admin = member(rt, "globex", "ceo@globex.test", "admin")
    member(rt, "globex", "spy@globex.test", "editor")
    assert [m["email"] for m in members.list_members(admin, rt.store)] == ["boss@acme.test"]
    for call in (lambda: members.change_role(admin, rt.store, "spy@globex.test", "admin"),
                 lambda: members.remove_member(admin, rt.store, "spy@globex.test")):
        with pytest.raises(MemberError, match="not a member of this tenant"):
            call()
    # one account in two tenants: removing it from acme leaves its globex membership
    members.add_member(admin, rt.store, "ceo@globex.test", "qa")  # existing account: no password needed
    members.remove_member(admin, rt.store, "ceo@globex.test")
    assert login(rt.store, "ceo@globex.test", PASSWORD, "globex").role == "admin"
    assert {m["email"] for m in members.list_members(globex_admin, rt.store)} == {"ceo@globex.test", "spy@globex.test"}
