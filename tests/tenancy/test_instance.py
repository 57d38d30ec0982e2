"""The instance administrator (core/tenancy/instance.py): the first-run admin sees and opens every tenant, also those
created later by the CLI, creates tenants and adds their first users; everybody else sees only their own tenants,
and a foreign tenant answers exactly like a missing one. Migration 013 picks the first-run admin of an existing
data dir; the CLI grants and takes back the role."""
from __future__ import annotations

import json

import pytest

from core.__main__ import main
from core.base.store import Store
from core.tenancy import instance, members, tenants
from core.tenancy.context import AuthError, TenancyError, authenticate, context_for, create_first_admin, tenants_of
from tests.schema import migrate, schema_before

PASSWORD = "a long test password"


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "data" / "cobertura.db")
    tenants.create_tenant(store, "demo", "Demo")
    yield store
    store.close()


@pytest.fixture
def boss(store):
    return create_first_admin(store, "boss@demo.test", PASSWORD)


def test_the_first_admin_sees_and_opens_every_tenant_also_later_ones(store, boss):
    assert instance.is_instance_admin(store, boss)
    tenants.create_tenant(store, "cli-made", "Made by the CLI")  # what `python -m core tenants create` does
    assert [t["slug"] for t in tenants_of(store, boss)] == ["cli-made", "demo"]
    assert {t["slug"]: t["role"] for t in tenants_of(store, boss)} == {"cli-made": "admin", "demo": "admin"}
    ctx = context_for(store, boss, "cli-made")  # no membership: admin as instance admin
    assert ctx.role == "admin" and ctx.actor == "boss@demo.test"
    assert [t["slug"] for t in instance.overview(store, boss)] == ["cli-made", "demo"]
    with pytest.raises(AuthError, match="not a member of that tenant"):
        context_for(store, boss, "no-such-tenant")


def test_the_instance_admin_creates_a_tenant_with_the_cli_checks_and_adds_its_first_users(store, boss):
    made = instance.create_tenant(store, boss, "acme-shop", "  Acme   Shop ")
    assert made["slug"] == "acme-shop" and made["name"] == "Acme Shop"
    with pytest.raises(TenancyError, match="not valid: use 2-40 lowercase"):
        instance.create_tenant(store, boss, "Acme Shop", "x")
    with pytest.raises(TenancyError, match="already exists"):
        instance.create_tenant(store, boss, "acme-shop", "Again")
    with pytest.raises(TenancyError, match="keep it under"):
        instance.create_tenant(store, boss, "long-name", "n" * 201)
    assert instance.create_tenant(store, boss, "no-name")["name"] == "no-name"  # as the CLI: the slug
    instance.add_user(store, boss, "acme-shop", "owner@acme.test", "admin", PASSWORD)
    instance.add_user(store, boss, "acme-shop", "ed@acme.test", "editor", PASSWORD)
    with pytest.raises(members.MemberError, match="already a member"):
        instance.add_user(store, boss, "acme-shop", "ed@acme.test", "qa", PASSWORD)
    with pytest.raises(TenancyError, match="at least 8"):
        instance.add_user(store, boss, "acme-shop", "new@acme.test", "qa", "short")
    with pytest.raises(members.MemberError, match="not known"):
        instance.add_user(store, boss, "acme-shop", "new@acme.test", "owner", PASSWORD)
    assert instance.list_members(store, boss, "acme-shop") == [{"email": "owner@acme.test", "role": "admin"},
                                                               {"email": "ed@acme.test", "role": "editor"}]
    editor = authenticate(store, "ed@acme.test", PASSWORD)
    assert tenants_of(store, editor) == [{"slug": "acme-shop", "name": "Acme Shop", "role": "editor"}]


@pytest.mark.parametrize("role", ["admin", "editor", "qa"])
def test_a_foreign_tenant_is_never_visible_to_a_tenant_member(store, boss, role):
    tenants.create_tenant(store, "acme", "Acme")
    tenants.create_user(store, "acme", f"{role}@acme.test", PASSWORD, role)
    user = authenticate(store, f"{role}@acme.test", PASSWORD)
    assert [t["slug"] for t in tenants_of(store, user)] == ["acme"]
    assert not instance.is_instance_admin(store, user)
    foreign, missing = [], []
    for slug, out in (("demo", foreign), ("no-such-tenant", missing)):
        with pytest.raises(AuthError) as refused:
            context_for(store, user, slug)
        out.append(str(refused.value))
    assert foreign == missing  # a foreign tenant answers exactly like a missing one
    for call in (lambda: instance.overview(store, user), lambda: instance.create_tenant(store, user, "mine"),
                 lambda: instance.add_user(store, user, "demo", "x@y.test", "admin", PASSWORD),
                 lambda: instance.list_members(store, user, "demo")):
        with pytest.raises(AuthError, match="Only the instance administrator"):
            call()
    assert [t["slug"] for t in tenants.list_tenants(store)] == ["acme", "demo"]  # nothing was created


def test_taking_the_role_back_applies_at_once(store, boss):
    tenants.create_tenant(store, "acme", "Acme")
    tenants.create_user(store, "acme", "other@acme.test", PASSWORD, "admin")
    instance.grant(store, "other@acme.test")
    instance.grant(store, "boss@demo.test", on=False)
    assert [t["slug"] for t in tenants_of(store, boss)] == ["demo"]  # the membership the first run gave
    with pytest.raises(AuthError):
        context_for(store, boss, "acme")
    with pytest.raises(TenancyError, match="last instance admin"):
        instance.grant(store, "other@acme.test", on=False)
    with pytest.raises(TenancyError, match="No user"):
        instance.grant(store, "nobody@acme.test")


def test_migration_013_makes_the_first_run_admin_of_an_existing_data_dir_instance_admin(tmp_path):
    db = schema_before("013_instance_admins", tmp_path / "old.db")
    for tid, slug in ((1, "demo"), (2, "acme")):
        db.execute("INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00+00:00')",
                   [tid, slug, slug])
    # an admin of one tenant made with the CLI, the first-run admin (of both), a later tenant and its admin
    for uid, email, at in ((1, "early@x.test", "2026-01-01T12:00:00+00:00"),
                           (2, "boss@x.test", "2026-01-02T00:00:00+00:00"),
                           (3, "late@x.test", "2026-02-01T00:00:00+00:00")):
        db.execute("INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, 'h', ?)", [uid, email, at])
    db.execute("INSERT INTO tenants (id, slug, name, created_at) VALUES (3, 'later', 'L', '2026-01-15T00:00:00+00:00')")
    for tenant, user, role in ((1, 1, "admin"), (1, 2, "admin"), (2, 2, "admin"), (3, 3, "admin")):
        db.execute("INSERT INTO memberships (tenant_id, user_id, role) VALUES (?, ?, ?)", [tenant, user, role])
    migrate(db, "013_instance_admins")
    flags = {r[0]: r[1] for r in db.execute("SELECT email, instance_admin FROM users").fetchall()}
    assert flags == {"early@x.test": 0, "boss@x.test": 1, "late@x.test": 0}


def test_migration_013_marks_nobody_when_no_user_administers_every_tenant(tmp_path):
    db = schema_before("013_instance_admins", tmp_path / "old.db")
    db.execute("INSERT INTO tenants (id, slug, name, created_at) VALUES (1, 'a', 'A', '2026-01-01T00:00:00+00:00')")
    db.execute("INSERT INTO tenants (id, slug, name, created_at) VALUES (2, 'b', 'B', '2026-01-01T00:00:00+00:00')")
    db.execute("INSERT INTO users (id, email, password_hash, created_at) VALUES (1, 'ed@x.test', 'h', "
               "'2026-01-02T00:00:00+00:00')")
    db.execute("INSERT INTO memberships (tenant_id, user_id, role) VALUES (1, 1, 'editor')")
    migrate(db, "013_instance_admins")
    assert db.execute("SELECT SUM(instance_admin) FROM users").fetchone()[0] == 0


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_lists_users_grants_the_role_resets_passwords_and_deletes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    assert run(capsys, "tenants", "create", "acme")[0] == 0
    assert run(capsys, "users", "create", "acme", "ann@acme.test", "--role", "admin", "--password", PASSWORD)[0] == 0
    assert run(capsys, "users", "create", "acme", "bob@acme.test", "--role", "editor", "--password", PASSWORD)[0] == 0
    code, out, _ = run(capsys, "users", "instance-admin", "bob@acme.test")
    assert code == 0 and "bob@acme.test is now instance admin" in out
    code, out, _ = run(capsys, "users", "list", "--json")
    assert json.loads(out) == [
        {"email": "ann@acme.test", "instance_admin": False, "tenants": [{"slug": "acme", "role": "admin"}]},
        {"email": "bob@acme.test", "instance_admin": True, "tenants": [{"slug": "acme", "role": "editor"}]}]
    code, out, _ = run(capsys, "users", "password", "bob@acme.test", "--password", "a new password!", "--json")
    assert code == 0 and json.loads(out) == {"email": "bob@acme.test", "sessions_ended": 0}
    code, _, err = run(capsys, "users", "delete", "ann@acme.test")
    assert code == 2 and "last admin of acme" in err
    code, out, _ = run(capsys, "users", "delete", "bob@acme.test")
    assert code == 0 and "Deleted bob@acme.test" in out
    code, _, err = run(capsys, "users", "instance-admin", "bob@acme.test")
    assert code == 2 and "No user 'bob@acme.test'" in err
    code, _, err = run(capsys, "users", "create", "acme", "x@acme.test")
    assert code == 2 and "--role" in err
    code, _, err = run(capsys, "users", "frobnicate", "x")
    assert code == 2 and "Usage: python -m core users create" in err
    code, out, _ = run(capsys, "users", "sign-out", "ann@acme.test")
    assert code == 0 and "0 admin-app session(s) of ann@acme.test ended" in out
