"""Who is asking: the ``TenantContext`` (only this package builds one), tenants, users and members, site keys
and customer tokens, visitor contexts, and per-tenant settings (S1-S2, P1). Imports only ``core.base``."""
