"""The Settings page's form state, shared by its sections: session keys per widget, the flash message,
and saving with user errors shown in place (never as a traceback)."""
from __future__ import annotations

import streamlit as st

from core.base.errors import UserError
from core.runtime import Runtime
from core.tenancy import settings as tenant_settings
from core.tenancy.context import TenantContext
from pages import common

#: Errors whose messages are written for the admin: shown on the page, never as a traceback.
PREFIX = "set_"
FLASH = "settings_flash"


# -- state ------------------------------------------------------------------------------------------------
_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


def k(name: str) -> str:
    return PREFIX + name


def fill(name: str, value) -> None:
    """A widget's starting value (the stored one) unless the admin has edited it in this session."""
    st.session_state.setdefault(k(name), value)


def reset_on_tenant_change(ctx: TenantContext) -> None:
    """Another tenant picked in the sidebar: forget the edits made to the previous tenant's forms."""
    if st.session_state.get(k("tenant")) != ctx.tenant_id:
        for key in [key for key in st.session_state if str(key).startswith(PREFIX)]:
            del st.session_state[key]
        st.session_state[k("tenant")] = ctx.tenant_id


def saved(message: str) -> None:
    flash("success", message)
    st.rerun()


def attempt(action, *args, **kwargs) -> bool:
    """Run a change; a user error is shown where the admin is, never as a traceback. False on error."""
    try:
        action(*args, **kwargs)
    except UserError as exc:
        st.error(str(exc))
        return False
    return True


def update(rt: Runtime, ctx: TenantContext, **changes) -> bool:
    return attempt(tenant_settings.update, ctx, rt.store, process=rt.settings, **changes)
