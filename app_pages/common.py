"""What every page of the admin app shares: one runtime per process, the tenant chosen in the sidebar.

Login arrives with a later issue; until then whoever opens the app acts as the local operator (an
admin) of the tenant picked in the sidebar.
"""
from __future__ import annotations

import streamlit as st

from core.demo import init_demo
from core.runtime import Runtime, open_runtime
from core.tenancy import TenantContext, list_tenants, local_operator

ACTOR = "admin-app"
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


def tenant_selector(rt: Runtime) -> None:
    """The sidebar part every page shares: which tenant, where the data lives."""
    slugs = [t["slug"] for t in list_tenants(rt.store)]
    if st.session_state.get(TENANT_KEY) not in slugs:
        st.session_state.pop(TENANT_KEY, None)
    st.sidebar.selectbox("Tenant", slugs, key=TENANT_KEY)
    st.sidebar.caption(f"Data directory: `{rt.settings.data_dir}`")
    st.sidebar.caption("No login yet: you act as the local operator (admin) of this tenant.")


def context(rt: Runtime) -> TenantContext:
    """The chosen tenant's context (the local operator until login lands)."""
    slug = st.session_state.get(TENANT_KEY) or list_tenants(rt.store)[0]["slug"]
    return local_operator(rt.store, slug, ACTOR)
