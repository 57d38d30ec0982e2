import pytest

from core.tenancy.context import (
    AuthError,
    TenancyError,
    TenantContext,
    local_operator,
    login,
)
from core.tenancy.tenants import (
    create_tenant,
    create_user,
    hash_password,
    memberships,
    verify_password,
)


def test_context_cannot_be_built_outside_authentication():
    with pytest.raises(AuthError):
        TenantContext(1, "acme", "me", "admin")


def test_password_hash_roundtrip():
    stored = hash_password("correct horse")
    assert stored.startswith("scrypt$") and "correct horse" not in stored
    assert verify_password("correct horse", stored)
    assert not verify_password("wrong horse", stored)
    assert hash_password("correct horse") != stored  # salted


def test_login_builds_the_context_for_the_membership(rt):
    create_tenant(rt.store, "acme")
    create_user(rt.store, "acme", "Ed@Example.com", "s3cret-pass", "editor")
    ctx = login(rt.store, "ed@example.com", "s3cret-pass", "acme")
    assert (ctx.tenant_slug, ctx.role, ctx.actor) == ("acme", "editor", "ed@example.com")
    assert ctx.can("editor") and not ctx.can("admin")


@pytest.mark.parametrize("email, password, tenant", [
    ("ed@example.com", "bad-password", "acme"),
    ("nobody@example.com", "s3cret-pass", "acme"),
    ("ed@example.com", "s3cret-pass", "globex"),  # no membership there
])
def test_login_failures_say_nothing_specific(rt, email, password, tenant):
    create_tenant(rt.store, "acme")
    create_tenant(rt.store, "globex")
    create_user(rt.store, "acme", "ed@example.com", "s3cret-pass", "editor")
    with pytest.raises(AuthError, match="Wrong e-mail, password or tenant"):
        login(rt.store, email, password, tenant)


@pytest.mark.parametrize("slug", ["A", "bad slug", "x", "-lead", "a" * 41])
def test_bad_tenant_slugs_are_refused_with_advice(rt, slug):
    with pytest.raises(TenancyError, match="lowercase letters"):
        create_tenant(rt.store, slug)


def test_duplicate_tenant_and_bad_user_input(rt):
    create_tenant(rt.store, "acme")
    with pytest.raises(TenancyError, match="already exists"):
        create_tenant(rt.store, "acme")
    with pytest.raises(TenancyError, match="not an e-mail"):
        create_user(rt.store, "acme", "no-at-sign", "s3cret-pass", "qa")
    with pytest.raises(TenancyError, match="Role"):
        create_user(rt.store, "acme", "a@b.co", "s3cret-pass", "owner")
    with pytest.raises(TenancyError, match="at least 8"):
        create_user(rt.store, "acme", "a@b.co", "short", "qa")
    with pytest.raises(TenancyError, match="No tenant"):
        create_user(rt.store, "nope", "a@b.co", "s3cret-pass", "qa")


def test_one_user_several_tenants(rt):
    create_tenant(rt.store, "acme")
    create_tenant(rt.store, "globex")
    create_user(rt.store, "acme", "ann@example.com", "s3cret-pass", "admin")
    create_user(rt.store, "globex", "ann@example.com", "", "qa")  # existing user: password not needed
    assert ([(m["slug"], m["role"]) for m in memberships(rt.store, "ann@example.com")]
            == [("acme", "admin"), ("globex", "qa")])


def test_local_operator_needs_an_existing_tenant(rt):
    with pytest.raises(AuthError, match="No tenant"):
        local_operator(rt.store, "ghost")


def test_a_session_reaches_only_the_tenants_of_its_memberships(rt):
    from core.tenancy.context import (
        UserSession,
        authenticate,
        context_for,
        create_first_admin,
    )
    from core.tenancy.tenants import (
        create_tenant,
        has_users,
    )

    create_tenant(rt.store, "acme", "Acme")
    create_tenant(rt.store, "globex", "Globex")
    assert not has_users(rt.store)
    admin = create_first_admin(rt.store, "Boss@Acme.test", "a long password")
    assert has_users(rt.store) and admin.email == "boss@acme.test"
    with pytest.raises(AuthError, match="already exists"):
        create_first_admin(rt.store, "other@acme.test", "a long password")
    create_user(rt.store, "acme", "ed@acme.test", "another password", "editor")
    editor = authenticate(rt.store, "ed@acme.test", "another password")
    assert context_for(rt.store, editor, "acme").role == "editor"
    with pytest.raises(AuthError, match="not a member"):
        context_for(rt.store, editor, "globex")
    with pytest.raises(AuthError, match="Wrong e-mail or password"):
        authenticate(rt.store, "ed@acme.test", "wrong password")
    with pytest.raises(AuthError, match="Wrong e-mail or password"):
        authenticate(rt.store, "nobody@acme.test", "another password")
    with pytest.raises(AuthError):
        UserSession("ed@acme.test")  # a session cannot be forged outside core.tenancy
    assert context_for(rt.store, admin, "globex").role == "admin"  # the first admin owns every tenant
