"""Who is asking: the ``TenantContext`` (only this package builds one), tenants, users and members, the admin
app's sign-in sessions and the instance administrator, site keys and customer tokens, visitor contexts, and
per-tenant settings (S1-S2, P1). Imports only ``core.base``."""
