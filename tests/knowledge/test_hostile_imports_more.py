"""A second hostile review of the import path (#16 items 1-5): files from spreadsheets, editors and other systems
that used to be stored changed (front matter as a heading, tables moved to the end, an HTML page's declared code
page ignored, a UTF-8 file with one stray byte turned to mojibake, numbers rewritten, NUL bytes replaced), files
followed or dropped without a word (links out of the folder, broken links, empty folders and zips), and readable
files refused with the wrong reason (a field over 128 KB, a JSON string holding U+2028, Excel's ``sep=`` line, a
PDF locked only against editing, a zip in a folder). Each is read back and compared with the file's text."""
from __future__ import annotations

import io
import json
import unicodedata
import zipfile

import docx
import pytest
from pypdf import PdfWriter

from core.knowledge import sources
from core.knowledge.ingest import ImportReport, import_bytes, import_paths, import_zip
from tests.documents import docx_bytes, pdf_bytes
from tests.knowledge.test_hostile_imports import named, stored_pairs


def content(ctx, rt, path: str) -> str:
    return sources.get(ctx, rt.store, path).content


def zip_of(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


# -- documents --------------------------------------------------------------------------------------------------
def test_markdown_front_matter_is_the_title_not_a_heading_of_the_text(ctx, rt):
    text = "---\ntitle: Envíos a Canarias\ndescription: Plazos y precios\ntags: [envio, islas]\n---\n\nTardan 5 días."
    report = import_bytes(ctx, rt.store, "envios.md", text.encode())
    source = sources.get(ctx, rt.store, "envios")
    assert (source.title, source.description, source.content) == ("Envíos a Canarias", "Plazos y precios",
                                                                  "Tardan 5 días.")
    assert named(report, "envios.md") == ["envios.md: front matter fields not imported: tags (its title and "
                                          "description are kept)"]
    import_bytes(ctx, rt.store, "rules.md", b"---\n\nNot front matter, a rule.\n\n---\n\nMore text.")
    assert "Not front matter, a rule." in content(ctx, rt, "rules")


def test_a_docx_keeps_its_tables_where_they_are_and_a_merged_cell_once(ctx, rt):
    document = docx.Document()
    document.add_paragraph("Before the table.")
    table = document.add_table(rows=3, cols=3)
    for col, text in enumerate(("Plan", "Price", "Months")):
        table.cell(0, col).text = text
    table.cell(1, 0).merge(table.cell(1, 1)).text = "Basic, all included"
    table.cell(1, 2).text = "12"
    table.cell(1, 2).merge(table.cell(2, 2))
    table.cell(2, 0).text, table.cell(2, 1).text = "Pro", "10 €"
    document.add_paragraph("After the table.")
    buffer = io.BytesIO()
    document.save(buffer)
    import_bytes(ctx, rt.store, "plans.docx", buffer.getvalue())
    assert content(ctx, rt, "plans") == ("Before the table.\n\nPlan | Price | Months\nBasic, all included | 12\n"
                                         "Pro | 10 € |\n\nAfter the table.")


def test_a_pdf_locked_only_against_editing_is_read_and_one_with_a_password_refused(ctx, rt):
    def locked(user: str) -> bytes:
        writer = PdfWriter(clone_from=io.BytesIO(pdf_bytes(["Owner restrictions only."])))
        writer.encrypt(user_password=user, owner_password="owner-secret")
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()

    assert import_bytes(ctx, rt.store, "restricted.pdf", locked("")).errors == []
    assert content(ctx, rt, "restricted") == "Owner restrictions only."
    report = import_bytes(ctx, rt.store, "secret.pdf", locked("pw"))
    assert named(report, "secret.pdf") == ["secret.pdf: the PDF is password-protected; export an unprotected copy."]


@pytest.mark.parametrize("declared, text", [
    ("iso-8859-2", "Zażółć gęślą jaźń. Dostawa w ciągu pięciu dni."),
    ("iso-8859-1", "Año"),
    ("windows-1252", "Cuesta 5 € — “oferta”."),
])
def test_an_html_file_is_read_in_the_code_page_its_meta_tag_declares(ctx, rt, declared, text):
    page = f'<html><head><meta http-equiv="Content-Type" content="text/html; charset={declared}"></head>' \
           f"<body><p>{text}</p></body></html>"
    report = import_bytes(ctx, rt.store, "page.html", page.encode(declared))
    assert report.warnings == [] and content(ctx, rt, "page") == text


def test_a_utf8_file_with_one_stray_western_byte_keeps_its_utf8_and_names_the_line(ctx, rt):
    data = "Envío a España: cinco años de garantía.\n\n".encode() + b"Precio: 5 \x80.\n"
    report = import_bytes(ctx, rt.store, "mixed.txt", data)
    assert content(ctx, rt, "mixed") == "Envío a España: cinco años de garantía.\n\nPrecio: 5 €."
    [warning] = named(report, "mixed.txt")
    assert warning.startswith("mixed.txt: UTF-8 text with 1 byte(s) in another encoding (line(s) 3)")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_not_read_as_utf8_full_of_nuls(ctx, rt, encoding):
    for name, text in (("es.txt", "Garantía de cinco años."), ("en.txt", "Plain words only here.")):
        assert import_bytes(ctx, rt.store, name, text.encode(encoding)).warnings == []
        assert content(ctx, rt, name[:-4]) == text


def test_nul_bytes_are_taken_out_and_said_never_replaced_silently(ctx, rt):
    report = import_bytes(ctx, rt.store, "nul.md", b"# Nul\n\nText with\x00 a NUL.\n")
    assert content(ctx, rt, "nul") == "# Nul\n\nText with a NUL."
    assert named(report, "nul.md") == ["nul.md: 1 NUL byte(s) taken out (the first on line 3); a text file has none, "
                                       "so check the stored text against the file."]
    report = import_bytes(ctx, rt.store, "faq.csv", b"question,answer\nN\x00ul?,A\x00\n")
    assert stored_pairs(ctx, rt, "faq") == [("Nul?", "A")] and len(report.warnings) == 1


@pytest.mark.parametrize("name, data, kind", [
    ("manual.txt", pdf_bytes(["hello"]), "a PDF document; rename it to .pdf"),
    ("notes.md", docx_bytes("X", ["hello"]), "a zip package (a .docx, .xlsx or .zip)"),
    ("faq.csv", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, "an old Office document (.doc, .xls)"),
    ("letter.txt", b"{\\rtf1\\ansi Hello}", "an RTF document"),
])
def test_a_binary_file_renamed_to_a_text_extension_is_refused_by_what_it_is(ctx, rt, name, data, kind):
    [error] = import_bytes(ctx, rt.store, name, data).errors
    assert error["error"].startswith(f"{name}: not a text file: its bytes are {kind}")
    assert sources.list_sources(ctx, rt.store) == []


# -- Q&A files --------------------------------------------------------------------------------------------------
def test_jsonl_numbers_are_stored_as_written_and_nan_is_refused_by_line(ctx, rt):
    lines = ['{"question": "Price?", "answer": 1e3}', '{"question": "Days?", "answer": 0.10}',
             '{"question": "Count?", "answer": 42}', '{"question": "Bad?", "answer": NaN}',
             '{"question": "Worse?", "answer": -Infinity}']
    report = import_bytes(ctx, rt.store, "faq.jsonl", "\n".join(lines).encode())
    assert sorted(stored_pairs(ctx, rt, "faq")) == [("Count?", "42"), ("Days?", "0.10"), ("Price?", "1e3")]
    assert [(s["line"], s["reason"].split(" where")[0]) for s in report.skipped] == [(4, "has NaN"),
                                                                                      (5, "has -Infinity")]


def test_a_jsonl_string_holding_a_unicode_line_separator_is_one_line(ctx, rt):
    rows = [{"question": "Two lines?", "answer": "One\u2028two"}, {"question": "NEL?", "answer": "a\x85b"}]
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode()
    report = import_bytes(ctx, rt.store, "faq.jsonl", data)
    assert report.skipped == [] and sorted(stored_pairs(ctx, rt, "faq")) == [("NEL?", "a\x85b"), ("Two lines?",
                                                                                                  "One\u2028two")]


def test_a_csv_answer_longer_than_the_csv_modules_default_limit_is_stored(ctx, rt):
    answer = "Long answer. " * 20_000  # 260 KB: over csv's default 128 KB field limit
    import_bytes(ctx, rt.store, "faq.csv", f'question,answer\nLong?,"{answer}"\n'.encode())
    assert stored_pairs(ctx, rt, "faq") == [("Long?", answer.strip())]


def test_line_breaks_inside_a_qa_field_are_stored_as_in_documents(ctx, rt):
    data = b'\xef\xbb\xbfquestion,answer\r\n"Hours?","9-18h,\r\nMon-Fri\rSat closed"\r\n'
    import_bytes(ctx, rt.store, "sheet.csv", data)
    import_bytes(ctx, rt.store, "lines.jsonl", b'{"question": "CR?", "answer": "one\\r\\ntwo"}\r\n')
    assert stored_pairs(ctx, rt, "sheet") == [("Hours?", "9-18h,\nMon-Fri\nSat closed")]
    assert stored_pairs(ctx, rt, "lines") == [("CR?", "one\ntwo")]


def test_excels_sep_line_and_a_tsv_file_name_their_delimiter(ctx, rt):
    excel = "sep=;\r\nPregunta;Respuesta\r\n¿Envían a Canarias?;\"Sí, en 5 días; 9,90 €\"\r\n".encode("cp1252")
    report = import_bytes(ctx, rt.store, "excel.csv", excel)
    assert stored_pairs(ctx, rt, "excel") == [("¿Envían a Canarias?", "Sí, en 5 días; 9,90 €")], report.as_dict()
    report = import_bytes(ctx, rt.store, "sheet.csv", b"sep=;\nquestion;answer\nA?;x;y\nB?;z\n")
    assert [s["line"] for s in report.skipped] == [3]  # line numbers count the sep= line
    import_bytes(ctx, rt.store, "export.tsv", b"question\tanswer\nComma?\tYes, and; semicolons\n")
    assert stored_pairs(ctx, rt, "export") == [("Comma?", "Yes, and; semicolons")]


def test_questions_that_share_a_path_are_told_to_be_reworded_not_renamed(ctx, rt):
    report = import_bytes(ctx, rt.store, "faq.csv", "question,answer\n¿Cómo pago?,A\ncomo   pago,B\n".encode())
    [row] = report.skipped
    assert row["line"] == 3 and "reword one of them or merge the two rows" in row["reason"]
    assert "rename the file" not in row["reason"]


# -- folders, links and zips ------------------------------------------------------------------------------------
def test_links_out_of_a_folder_are_listed_and_not_followed(ctx, rt, tmp_path):
    (tmp_path / "secret.md").write_text("# Secret\n\nOutside the folder.")
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nInside.")
    (folder / "alias.md").symlink_to(folder / "guide.md")  # inside the folder: an ordinary file of it
    (folder / "escape.md").symlink_to(tmp_path / "secret.md")
    (folder / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    (folder / "broken.md").symlink_to(tmp_path / "missing.md")
    report = import_paths(ctx, rt.store, [folder])
    assert sorted(report.saved) == ["kb/alias", "kb/guide"]
    reasons = {s["file"].rsplit("/", 1)[-1]: s["reason"] for s in report.skipped}
    assert reasons["escape.md"].startswith(f"is a link to '{tmp_path / 'secret.md'}', outside the folder; not followed")
    assert reasons["elsewhere"].startswith("is a link to the folder")
    assert reasons["broken.md"].startswith("is a broken link")
    assert all("Outside the folder" not in s.content for s in sources.list_sources(ctx, rt.store))


def test_an_empty_folder_and_an_empty_zip_are_refused_not_reported_as_nothing(ctx, rt, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "sub").mkdir()
    report = import_paths(ctx, rt.store, [tmp_path / "empty"])
    assert report.errors == [{"file": str(tmp_path / "empty"), "error": f"{tmp_path / 'empty'}: the folder holds no "
                                                                         "files; nothing to import (check the path)."}]
    report = import_zip(ctx, rt.store, "empty.zip", zip_of({"kb/": b""}))
    assert named(report, "empty.zip") == ["empty.zip: the zip holds no files; nothing to import (zip the folder "
                                          "again)."]


def test_a_zip_in_a_folder_is_imported_where_it_lies_and_a_zip_in_a_zip_is_refused_by_name(ctx, rt, tmp_path):
    folder = tmp_path / "kb" / "manuals"
    folder.mkdir(parents=True)
    inner = zip_of({"bikes/urban.md": b"# Urban\n\nSeven gears."})
    (folder / "bundle.zip").write_bytes(zip_of({"pack/guide.md": b"# Guide\n\n5 Nm.", "pack/old.zip": inner}))
    report = import_paths(ctx, rt.store, [tmp_path / "kb"])
    assert report.saved == ["kb/manuals/pack/guide"]
    [error] = report.errors
    assert error["error"].startswith(f"{folder / 'bundle.zip'}:pack/old.zip: is a zip inside a zip, which is not "
                                     "unpacked; unzip it")


def test_names_alike_in_two_unicode_forms_are_explained_and_a_reimport_in_the_other_form_updates(ctx, rt):
    nfc, nfd = unicodedata.normalize("NFC", "canción.md"), unicodedata.normalize("NFD", "canción.md")
    report = ImportReport()
    import_bytes(ctx, rt.store, nfd, b"# Canci\xc3\xb3n\n\nFirst.", report=report)
    import_bytes(ctx, rt.store, nfc, b"# Canci\xc3\xb3n\n\nSecond.", report=report)
    [error] = report.errors
    assert "write their accents in different Unicode forms, composed and decomposed" in error["error"]
    assert content(ctx, rt, "cancion") == "# Canción\n\nFirst."
    again = import_bytes(ctx, rt.store, nfc, b"# Canci\xc3\xb3n\n\nUpdated.")  # the same file, uploaded from Windows
    assert again.errors == [] and again.saved == ["cancion"]
    assert content(ctx, rt, "cancion") == "# Canción\n\nUpdated."


def test_the_admin_apps_folder_upload_imports_a_zip_where_it_lies(runtime, monkeypatch):
    from core.tenancy.context import local_operator
    from core.tenancy.tenants import create_tenant
    from tests.apptest import settle
    from tests.pages.test_sources import open_page, run

    create_tenant(runtime.store, "acme", "Acme")
    ctx, rt = local_operator(runtime.store, "acme"), runtime
    at = open_page(runtime, monkeypatch)
    at.file_uploader(key="upload_dir_0").set_value([
        ("kb/intro.md", b"# Intro\n\nHello.", "text/markdown"),
        ("kb/manuals/bundle.zip", zip_of({"pack/guide.md": b"# Guide\n\n5 Nm."}), "application/zip"),
    ])
    at.button(key="upload_import").click()
    settle(run(at))  # imported in the background
    assert content(ctx, rt, "kb/manuals/pack/guide") == "# Guide\n\n5 Nm."
    assert content(ctx, rt, "kb/intro") == "# Intro\n\nHello."
