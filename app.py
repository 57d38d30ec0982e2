"""Cobertura admin app: the knowledge preview and the gap backlog, one page each in ``app_pages/``.

(Not ``pages/``: a folder of that name beside this script switches Streamlit to its legacy file-based
navigation, which would run a page without this script, its page config and its tenant selector.)

Run: streamlit run app.py  (creates and trains the demo tenant on first start).
"""
from __future__ import annotations

import streamlit as st

from app_pages import common

st.set_page_config(page_title="Cobertura", page_icon="📚", layout="wide")
rt = common.open_app()
page = st.navigation([
    st.Page("app_pages/knowledge.py", title="Knowledge", icon=":material/library_books:", default=True),
    st.Page("app_pages/gaps.py", title="Gap backlog", icon=":material/help_center:", url_path="gaps"),
])
common.tenant_selector(rt)
page.run()
