"""Cobertura admin app: sign in, pick a tenant, and the pages your role may use (``pages/``).

A ``pages/`` folder beside this script makes Streamlit serve its files on their own until this script has
run once in the process (legacy file-based navigation); a page run that way ends that mode and runs again
through this script (``pages.common.outside_the_app``). The role gate is this script's navigation.

The sign-in survives a reload (a signed session cookie, checked against its server-side record on every
run: ``core.tenancy.sessions``), and every page URL is known before sign-in too: ``/sources`` asks to sign in,
then opens Sources.

Run: streamlit run app.py  (creates and trains the demo tenant on first start, then asks for the admin).
"""
from __future__ import annotations

import streamlit as st

from pages import common

PAGES = common.PAGES

st.set_page_config(page_title="Cobertura", page_icon="📚", layout="wide")
rt = common.open_app()
session = common.signed_in(rt)
common.cookie_jar()  # first, so the cookie is written before anything else on the page can stop the run
ctx = common.tenant_selector(rt, session) if session else None
if ctx is None:
    page = st.navigation(common.sign_in_pages(session), position="hidden")
else:
    page = st.navigation(common.visible_pages(rt, session, ctx))
page.run()
