"""Cobertura admin app: sign in, pick a tenant, and the pages your role may use (``pages/``).

A ``pages/`` folder beside this script makes Streamlit serve its files on their own until this script has
run once in the process (legacy file-based navigation); a page run that way shows nothing but the way to
sign in (``pages.common.page_context``). The role gate is this script's navigation.

Run: streamlit run app.py  (creates and trains the demo tenant on first start, then asks for the admin).
"""
from __future__ import annotations

import streamlit as st

from pages import common

PAGES = common.PAGES

st.set_page_config(page_title="Cobertura", page_icon="📚", layout="wide")
rt = common.open_app()
session = common.signed_in()
ctx = common.tenant_selector(rt, session) if session else None
if ctx is None:
    page = st.navigation([st.Page(common.sign_in_page, title="Sign in", icon=":material/login:")], position="hidden")
else:
    visible = [st.Page(path, title=title, icon=icon, url_path=url) for path, title, icon, url, roles in PAGES
               if common.allowed(ctx.role, roles)]
    if not visible:
        st.info(f"Your role in this tenant ({ctx.role}) has no pages yet.")
        st.stop()
    page = st.navigation(visible)
page.run()
