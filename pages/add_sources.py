"""The Sources page's "Add sources" tab (K1): write a text or a Q&A pair, upload files, a folder or a .zip,
paste HTML, fetch a URL. Each import reports per file; a bad file never stops the rest."""
from __future__ import annotations

from pathlib import PurePosixPath

import streamlit as st

from core.base.language import DETECTABLE
from core.knowledge import ingest, sources
from core.knowledge.extract import SUPPORTED
from core.knowledge.sources import SourceError
from core.runtime import Runtime
from core.tenancy.context import TenantContext
from pages import placeholders, uploads
from pages.source_actions import flash, guarded, select


def report_messages(report: ingest.ImportReport, what: str) -> None:
    if report.saved:
        flash("success", f"{what}: {len(report.saved)} source(s) saved ({', '.join(f'`{p}`' for p in report.saved[:8])}"
                         + (" …" if len(report.saved) > 8 else "") + "). Train to make them answerable.")
        select(report.saved[0])
    if report.unchanged:
        flash("info", f"{len(report.unchanged)} source(s) were already there with the same text.")
    for error in report.errors:
        flash("error", error["error"] if error["file"] in error["error"] else f"{error['file']}: {error['error']}")
    for warning in report.warnings:
        flash("warning", warning["warning"])
    if report.skipped:
        shown = [f"{s['file']}" + (f" line {s['line']}" if s.get("line") else "") + f" {s['reason']}"
                 for s in report.skipped[:20]]
        flash("warning", f"{len(report.skipped)} skipped:\n\n" + "\n\n".join(shown)
              + (f"\n\n… and {len(report.skipped) - 20} more" if len(report.skipped) > 20 else ""))
    if not (report.saved or report.unchanged or report.errors or report.skipped):
        flash("warning", "Nothing to import: choose files or a folder first.")
    elif report.errors or report.skipped or report.warnings:
        flash("info", f"{what}: {report.summary()}.")


def _create(rt: Runtime, ctx: TenantContext, kind: str) -> None:
    k = {f: f"new_{kind}_{f}" for f in ("path", "title", "content", "description", "language", "starred")}
    source = sources.save(ctx, rt.store, st.session_state.get(k["path"], ""), type=kind, replace=False,
                          title=st.session_state.get(k["title"], ""), content=st.session_state.get(k["content"], ""),
                          description=st.session_state.get(k["description"], ""),
                          language=st.session_state.get(k["language"]) or "",
                          starred=st.session_state.get(k["starred"], False))
    for key in k.values():
        st.session_state.pop(key, None)
    select(source.path)
    flash("success", f"Created `{source.path}`. Train to make it answerable.")


def create_form(rt: Runtime, ctx: TenantContext, kind: str) -> None:
    qa = kind == "qa"
    k = {f: f"new_{kind}_{f}" for f in ("path", "title", "content", "description", "language", "starred")}
    left, right = st.columns([3, 1])
    left.text_input("Path in the tree", key=k["path"],
                    placeholder="faq/the-question" if qa else placeholders.SOURCE_PATH)
    right.selectbox("Language", ["", *DETECTABLE], key=k["language"], format_func=lambda c: c or "detect")
    st.text_input("Question" if qa else "Title", key=k["title"])
    st.text_input("Description (optional)", key=k["description"])
    st.text_area("Answer" if qa else "Content", key=k["content"], height=200)
    st.checkbox("Starred", key=k["starred"])
    st.button("Create the Q&A pair" if qa else "Create the source", icon=":material/add:", type="primary",
              key=f"create_{kind}", on_click=guarded(_create), args=(rt, ctx, kind))


def _upload(rt: Runtime, ctx: TenantContext) -> None:
    nonce = st.session_state.get("_upload_nonce", 0)
    prefix = st.session_state.get("upload_prefix", "").strip()
    files = [*(st.session_state.get(f"upload_files_{nonce}") or []),
             *(st.session_state.get(f"upload_dir_{nonce}") or [])]
    if prefix:
        sources.normalize_path(prefix)  # a bad prefix is refused before anything is imported
    if not files:
        report_messages(ingest.ImportReport(), "Upload")
        return
    uploads.start(rt, ctx, [(file.name, file.getvalue()) for file in files], prefix)  # imported in the background
    st.session_state["_upload_nonce"] = nonce + 1  # empty the uploaders


def upload_form(rt: Runtime, ctx: TenantContext) -> None:
    nonce = st.session_state.get("_upload_nonce", 0)
    st.caption(f"Supported: {', '.join(SUPPORTED)} (a .csv or .jsonl of question/answer pairs becomes a folder of Q&A "
               "sources), and .zip archives of folders. A folder's structure becomes tree paths. A bad file gets its "
               "own error and the rest goes on.")
    st.text_input("Into folder (optional)", key="upload_prefix", placeholder="folder")
    files, folder = st.columns(2)
    files.file_uploader("Files or a .zip", accept_multiple_files=True, key=f"upload_files_{nonce}",
                        type=[e.lstrip(".") for e in SUPPORTED] + ["zip"])
    folder.file_uploader("A whole folder", accept_multiple_files="directory", key=f"upload_dir_{nonce}",
                         type=[e.lstrip(".") for e in SUPPORTED] + ["zip"])
    st.button("Import", icon=":material/upload:", type="primary", key="upload_import", on_click=guarded(_upload),
              args=(rt, ctx), disabled=uploads.running(ctx) is not None)  # its progress: above the tabs


def _paste(rt: Runtime, ctx: TenantContext) -> None:
    if not st.session_state.get("paste_path", "").strip():
        raise SourceError("Give the pasted page a path in the tree, like 'web/returns'.")
    report = ingest.import_html(ctx, rt.store, st.session_state["paste_path"], st.session_state.get("paste_html", ""),
                                st.session_state.get("paste_url", "").strip())
    report_messages(report, "Pasted page")


def _fetch(rt: Runtime, ctx: TenantContext) -> None:
    url = st.session_state.get("fetch_url", "").strip()
    path = st.session_state.get("fetch_path", "").strip()
    if not path:
        name = PurePosixPath(url.split("?")[0].split("#")[0].rstrip("/")).name or "page"
        path = f"web/{sources.slug(name.rsplit('.', 1)[0])}"
    report = ingest.import_url(ctx, rt.store, path, url, timeout=rt.settings.fetch_timeout)
    report_messages(report, "Fetched page")


def add_tab(rt: Runtime, ctx: TenantContext) -> None:
    tabs = st.tabs(["Write a text", "Write a Q&A pair", "Upload files or a folder", "Paste HTML", "Fetch a URL"])
    with tabs[0]:
        create_form(rt, ctx, "text")
    with tabs[1]:
        create_form(rt, ctx, "qa")
    with tabs[2]:
        upload_form(rt, ctx)
    with tabs[3]:
        row = st.columns(2)
        row[0].text_input("Path in the tree", key="paste_path", placeholder="web/page")
        row[1].text_input("Page URL (optional, cited with answers)", key="paste_url")
        st.text_area("HTML", key="paste_html", height=200, placeholder="<html>…</html>")
        st.button("Import the page", icon=":material/code:", type="primary", key="paste_import",
                  on_click=guarded(_paste), args=(rt, ctx))
    with tabs[4]:
        row = st.columns(2)
        row[0].text_input("URL", key="fetch_url", placeholder="https://example.com/page")
        row[1].text_input("Path in the tree (optional)", key="fetch_path", placeholder="web/page")
        st.caption(f"Needs network access from this machine (timeout {rt.settings.fetch_timeout:g} s); offline, save "
                   "the page as HTML and upload or paste it.")
        st.button("Fetch and import", icon=":material/language:", type="primary", key="fetch_import",
                  on_click=guarded(_fetch), args=(rt, ctx))
