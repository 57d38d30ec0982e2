"""What every editing control of the Sources page shares: the flash messages, the guard that refuses a
non-editor and turns a user error into a message, and the selection of a source in the tree."""
from __future__ import annotations

import streamlit as st

from core.base.errors import UserError
from core.runtime import Runtime
from core.tenancy.context import AuthError, TenantContext
from pages import common

#: Errors whose message is written for the user: shown with st.error, never as a traceback.
FLASH, SELECTED = "src_flash", "src_selected"

_flash = common.Flash(FLASH)
flash, show_flash = _flash.set, _flash.show


def guarded(action):
    """An editing callback: refused for a non-editor; a user error becomes a message, never a traceback."""
    def run(rt: Runtime, ctx: TenantContext, *args):
        try:
            if not ctx.can("editor"):
                raise AuthError(f"Your role ({ctx.role}) cannot change sources; ask an editor or an admin.")
            action(rt, ctx, *args)
        except UserError as exc:
            flash("error", str(exc))
    return run


def select(path: str | None) -> None:
    if path is None:
        st.session_state.pop(SELECTED, None)
    else:
        st.session_state[SELECTED] = path
    st.session_state["_src_table_nonce"] = st.session_state.get("_src_table_nonce", 0) + 1
