"""Knowledge (read-only preview until the admin-app issue lands): the knowledge tree of a tenant, each
source's extracted text and chunks, and a search box that shows what retrieval selects."""
from __future__ import annotations

import streamlit as st

from core import sources
from app_pages import common

rt = common.runtime()
ctx = common.context(rt)
st.sidebar.info("Read-only preview of the knowledge: editing and training from this page come with the admin app.")
status = rt.index.status(ctx)
st.title("Knowledge")
cols = st.columns(4)
cols[0].metric("Sources", status["sources"])
cols[1].metric("Changed since training", status["changed"])
cols[2].metric("Chunks", status["chunks"])
cols[3].metric("Vectors / keyword docs", f"{status['vectors']} / {status['keyword_docs']}")

tree, search = st.tabs(["Tree", "Try a search"])
with tree:
    items = sources.list_sources(ctx, rt.store)
    descriptions = sources.folder_descriptions(ctx, rt.store)
    rows = [{"path": s.path, "title": s.title, "type": s.type, "★": "★" if s.starred else "", "lang": s.language,
             "chars": len(s.content), "status": "changed" if s.changed else "trained", "trained_at": s.trained_at}
            for s in items]
    st.dataframe(rows, hide_index=True, width="stretch")
    if descriptions:
        st.caption(" · ".join(f"**{p}**: {d}" for p, d in sorted(descriptions.items())))
    if items:
        chosen = st.selectbox("Preview a source", [s.path for s in items])
        source = sources.get(ctx, rt.store, chosen)
        chunks = rt.index.chunks_of(ctx, source.id)
        left, right = st.columns(2)
        left.subheader("Extracted text")
        left.text(source.content)
        right.subheader(f"{len(chunks)} chunk(s)")
        for chunk in chunks:
            right.markdown(f"`{chunk.id}` · chars {chunk.start}–{chunk.end} ({len(chunk.text)})")
            right.text(chunk.text)
with search:
    query = st.text_input("Question", placeholder="¿Cuánto tarda un envío a Canarias?")
    if query:
        result = rt.retriever.search(ctx, query)
        st.caption(f"Rewritten: {result.rewritten} · language {result.language} · {result.seconds * 1000:.0f} ms")
        for n, hit in enumerate(result.hits, start=1):
            with st.expander(f"{n}. {hit.path} — {hit.title} ({hit.type}, score {hit.score:.3f})", expanded=n == 1):
                st.caption(f"similarity {hit.similarity:.3f} · bm25 {hit.bm25:.2f} · found by {hit.found_by} · {hit.reason}")
                st.text(hit.text)
        if not result.hits:
            st.warning("No chunk supports this question well enough: the agent would abstain.")
