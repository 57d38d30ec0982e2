"""Cobertura admin app: sign in, pick a tenant, and the pages your role may use (``pages/``).

(Not ``pages/``: a folder of that name beside this script switches Streamlit to its legacy file-based
navigation, which would run a page without this script, its sign-in and its role gate.)

Run: streamlit run app.py  (creates and trains the demo tenant on first start, then asks for the admin).
"""
from __future__ import annotations

import streamlit as st

from pages import common

#: page file, title, icon, url path, roles that see it (admin sees everything)
PAGES = [
    ("pages/sources.py", "Sources", ":material/library_books:", "sources", {"editor", "qa"}),
    ("pages/gaps.py", "Gap backlog", ":material/help_center:", "gaps", {"editor"}),
    ("pages/inbox.py", "Inbox", ":material/inbox:", "inbox", {"editor"}),
    ("pages/sandbox.py", "Sandbox", ":material/forum:", "sandbox", {"editor", "qa"}),
    ("pages/qa.py", "QA suites", ":material/fact_check:", "qa", {"qa"}),
    ("pages/settings.py", "Settings", ":material/settings:", "settings", set()),
]


def allowed(role: str, roles: set[str]) -> bool:
    return role == "admin" or role in roles


st.set_page_config(page_title="Cobertura", page_icon="📚", layout="wide")
rt = common.open_app()
session = common.signed_in()
ctx = common.tenant_selector(rt, session) if session else None
if ctx is None:
    page = st.navigation([st.Page(common.sign_in_page, title="Sign in", icon=":material/login:")], position="hidden")
else:
    visible = [st.Page(path, title=title, icon=icon, url_path=url) for path, title, icon, url, roles in PAGES
               if allowed(ctx.role, roles)]
    if not visible:
        st.info(f"Your role in this tenant ({ctx.role}) has no pages yet.")
        st.stop()
    page = st.navigation(visible)
page.run()
