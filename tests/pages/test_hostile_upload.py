"""The Sources page's zip upload with hostile members (#16 item 5): a forged size, an encrypted member and a
broken .docx are each refused by name, a Q&A row without an answer is listed with its line, the rest is saved."""
from __future__ import annotations

import io

from core.knowledge import sources
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.apptest import settle
from tests.knowledge.hostile_files import broken_docx, write_zip
from tests.pages.test_sources import open_page, run


def test_a_hostile_zip_upload_is_reported_member_by_member(runtime, monkeypatch):
    create_tenant(runtime.store, "acme", "Acme")
    ctx = local_operator(runtime.store, "acme")
    archive = io.BytesIO()
    write_zip(archive, [
        ("kb/guide.md", b"# Guide\n\nTighten the bolts to 5 Nm."),
        ("kb/faq.csv", b"question,answer\nOpen on Sunday?,No.\nAnd on Monday?,\n"),
        ("kb/forged.md", b"# Forged\n\n" + b"x" * 2_000_000),
        ("kb/secret.md", b"# Secret"),
        ("kb/broken.docx", broken_docx()),
    ], forged={"kb/forged.md": 64}, encrypted=("kb/secret.md",))
    at = open_page(runtime, monkeypatch)
    at.file_uploader(key="upload_files_0").set_value(("kb.zip", archive.getvalue(), "application/zip"))
    at.button(key="upload_import").click()
    settle(run(at))  # imported in the background
    assert sources.get(ctx, runtime.store, "kb/guide").content == "# Guide\n\nTighten the bolts to 5 Nm."
    assert [s.title for s in sources.list_sources(ctx, runtime.store, "kb/faq")] == ["Open on Sunday?"]
    errors = [e.value for e in at.error]
    assert len(errors) == 3
    assert any(e.startswith("kb.zip:kb/forged.md: damaged inside") for e in errors)
    assert any(e.startswith("kb.zip:kb/secret.md: it is encrypted") for e in errors)
    assert any(e.startswith("kb.zip:kb/broken.docx: the document's XML is damaged") for e in errors)
    warnings = [w.value for w in at.warning]
    assert any("kb.zip:kb/faq.csv line 3 has no answer" in w for w in warnings)
    assert any("Upload: 2 source(s) saved" in s.value for s in at.success)
    assert any("2 saved, 0 unchanged, 3 refused, 1 skipped" in i.value for i in at.info)
