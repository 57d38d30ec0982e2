"""Imports that used to change or lose data silently (#16, items 1-5): each file is stored exactly (read back and
compared with the text it came from) or refused with a message naming it and what to do; the rest goes on."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.__main__ import main
from core.knowledge import sources
from core.knowledge.encoding import decode
from core.knowledge.extract import extract
from core.knowledge.ingest import ImportReport, import_bytes, import_paths, import_zip
from tests.documents import docx_bytes, pdf_bytes
from tests.knowledge.hostile_files import (
    TRICKY_PAIRS,
    bomb_zip,
    broken_docx,
    pdf_with_stream,
    qa_csv,
    write_zip,
)

ROOT = Path(__file__).resolve().parents[2]
SPANISH = "Todas las bicicletas tienen cinco años de garantía; la batería, dos años."


def stored_pairs(ctx, rt, folder: str) -> list[tuple[str, str]]:
    return [(s.title, s.content) for s in sources.list_sources(ctx, rt.store, folder) if s.type == "qa"]


def named(report: ImportReport, file: str) -> list[str]:
    """Every refusal, skipped row and warning of the report that names ``file``."""
    return [e["error"] for e in report.errors if file in e["error"]] + \
        [f"line {s.get('line')}: {s['reason']}" for s in report.skipped if file in s["file"]] + \
        [w["warning"] for w in report.warnings if file in w["warning"]]


# -- 1. CSV dialects --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_a_csv_written_by_pythons_csv_module_is_stored_exactly(ctx, rt, delimiter):
    report = import_bytes(ctx, rt.store, "faq.csv", qa_csv(TRICKY_PAIRS, delimiter))
    assert report.errors == [] and report.skipped == [] and len(report.saved) == len(TRICKY_PAIRS) == 33
    assert sorted(stored_pairs(ctx, rt, "faq")) == sorted(TRICKY_PAIRS)


def test_the_two_row_csv_the_sniffer_misread_keeps_its_quotes_and_commas():
    pairs = TRICKY_PAIRS[:2]  # csv.Sniffer picks "'" as the quote character for these
    assert [(e.title, e.content) for e in extract("faq.csv", qa_csv(pairs)).items] == pairs


def test_an_unquoted_comma_refuses_that_row_with_its_line_and_keeps_the_rest(ctx, rt):
    data = b'question,answer\n"Do you ship?","Yes, to Spain."\nOpen on Sunday?,No, only Monday to Saturday\nQ3,A3\n'
    report = import_bytes(ctx, rt.store, "faq.csv", data)
    assert sorted(stored_pairs(ctx, rt, "faq")) == [("Do you ship?", "Yes, to Spain."), ("Q3", "A3")]
    [row] = report.skipped
    assert row["file"] == "faq.csv" and row["line"] == 3 and "has 3 fields but the header has 2" in row["reason"]
    assert "double quotes" in row["reason"]


def test_a_malformed_quote_refuses_the_file_naming_the_line():
    data = b'question,answer\nQ1,A1\n"Q2" extra,A2\n'
    with pytest.raises(Exception, match=r'faq.csv: line 3: malformed CSV .*Nothing from this file was imported'):
        extract("faq.csv", data)


def test_a_csv_without_a_question_answer_header_says_what_the_header_must_be():
    with pytest.raises(Exception, match="faq.csv: no Q&A pairs found: the first line must name the columns"):
        extract("faq.csv", b"name,value\nx,y\n")


# -- 2. rows without an answer or a question -------------------------------------------------------------------
def test_rows_without_an_answer_or_a_question_are_reported_with_their_lines(ctx, rt):
    data = ('pregunta;respuesta\n¿Horario?;"De 9 a 18,\nde lunes a viernes"\n¿Sin respuesta?;\n;Respuesta huérfana\n'
            '\n¿Teléfono?;900 100 200\n').encode()
    report = import_bytes(ctx, rt.store, "faq.csv", data)
    assert sorted(stored_pairs(ctx, rt, "faq")) == [("¿Horario?", "De 9 a 18,\nde lunes a viernes"),
                                                     ("¿Teléfono?", "900 100 200")]
    assert [(s["line"], s["reason"].split(";")[0]) for s in report.skipped] == [(4, "has no answer"),
                                                                                 (5, "has no question")]
    assert report.summary() == "2 saved, 0 unchanged, 0 refused, 2 skipped, 0 warning(s)"


def test_jsonl_bad_lines_are_refused_one_by_one(ctx, rt):
    lines = [json.dumps({"question": "Q1", "answer": "A1, \"quoted\""}), "{not json}", json.dumps([1, 2]),
             json.dumps({"question": "Q4"}), json.dumps({"question": "Q5", "answer": "A5", "tags": ["x"]})]
    report = import_bytes(ctx, rt.store, "faq.jsonl", "\n".join(lines).encode())
    assert sorted(stored_pairs(ctx, rt, "faq")) == [("Q1", 'A1, "quoted"'), ("Q5", "A5")]
    assert [s["line"] for s in report.skipped] == [2, 3, 4]
    assert report.warnings == [{"file": "faq.jsonl", "warning": "faq.jsonl: fields not imported: tags (only the "
                                                                "question and the answer are stored)"}]


def test_duplicate_questions_in_one_file_are_not_merged_silently(ctx, rt):
    report = import_bytes(ctx, rt.store, "faq.csv", qa_csv([("Same?", "First answer"), ("Same?", "Second answer")]))
    assert stored_pairs(ctx, rt, "faq") == [("Same?", "First answer")]
    [row] = report.skipped
    assert row["line"] == 3 and "faq.csv line 2 already takes" in row["reason"]


# -- 3. encodings -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["latin-1", "cp1252", "utf-16", "utf-8-sig", "utf-8"])
@pytest.mark.parametrize("text", [SPANISH, "cinco años", "Política de devoluções: você tem 30 dias.",
                                  "Größe für Bücher", "Ça coûte très cher, à côté."])
def test_text_in_any_common_encoding_is_stored_as_written(ctx, rt, encoding, text):
    report = import_bytes(ctx, rt.store, "note.txt", text.encode(encoding))
    assert report.errors == [] and report.warnings == [], report.as_dict()
    assert sources.get(ctx, rt.store, "note").content == text


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252", "utf-16"])
def test_a_legacy_encoded_csv_is_stored_as_written(ctx, rt, encoding):
    pairs = [("¿Cuántos años de garantía?", "Cinco años, y la batería dos."), ("Preço?", "Dez euros, à vista.")]
    data = qa_csv(pairs).decode().encode(encoding)
    import_bytes(ctx, rt.store, "faq.csv", data)
    assert sorted(stored_pairs(ctx, rt, "faq")) == sorted(pairs)


def test_an_uncertain_encoding_is_stored_with_a_warning_that_says_so(ctx, rt):
    assert decode("é".encode("latin-1"), "x.txt").warning  # one byte fits many code pages alike
    report = import_bytes(ctx, rt.store, "e.txt", "é".encode("latin-1"))
    [warning] = report.warnings
    assert warning["warning"].startswith("e.txt: the text encoding is uncertain; read as ")
    assert "save the file as UTF-8" in warning["warning"]


def test_binary_bytes_named_like_text_are_refused():
    with pytest.raises(Exception, match="notes.md: not a text file"):
        extract("notes.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\xff\xfe\x00")


# -- 4. path collisions -----------------------------------------------------------------------------------------
def test_two_files_with_one_stem_never_overwrite_each_other(ctx, rt, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "good.docx").write_bytes(docx_bytes("Good (docx)", ["The Word version of the text."]))
    (folder / "good.pdf").write_bytes(pdf_bytes(["The PDF version of the text."]))
    report = import_paths(ctx, rt.store, [folder])
    assert report.saved == ["folder/good"]
    assert "The Word version" in sources.get(ctx, rt.store, "folder/good").content
    [error] = report.errors
    assert error["file"].endswith("good.pdf") and "good.docx already takes in this import" in error["error"]
    assert "nothing was overwritten" in error["error"] and "--prefix" in error["error"]
    again = import_paths(ctx, rt.store, [folder])  # the same import again: the docx is unchanged, the pdf refused
    assert again.unchanged == ["folder/good"] and len(again.errors) == 1
    alone = import_bytes(ctx, rt.store, "good.pdf", (folder / "good.pdf").read_bytes(), "folder")
    assert alone.saved == [] and "would replace the file source at 'folder/good', imported from 'good.docx'" in \
        alone.errors[0]["error"]
    (folder / "good.docx").write_bytes(docx_bytes("Good (docx)", ["The Word version, edited."]))
    (folder / "good.pdf").unlink()
    assert import_paths(ctx, rt.store, [folder]).saved == ["folder/good"]  # re-importing a file still updates it
    assert "edited" in sources.get(ctx, rt.store, "folder/good").content


def test_an_import_never_replaces_a_source_written_in_the_app(ctx, rt):
    sources.save(ctx, rt.store, "policies/returns", title="Returns", content="Thirty days, written by hand.")
    report = import_bytes(ctx, rt.store, "returns.md", b"# Returns\n\nFourteen days.", "policies")
    assert "written in the app" in report.errors[0]["error"]
    assert sources.get(ctx, rt.store, "policies/returns").content == "Thirty days, written by hand."


def test_a_qa_file_and_a_document_of_the_same_name(ctx, rt):
    report = import_bytes(ctx, rt.store, "faq.md", b"# FAQ\n\nAsk us anything.")
    import_bytes(ctx, rt.store, "faq.csv", qa_csv([("Q?", "A.")]), report=report)
    assert report.saved == ["faq"] and "its Q&A pairs go in folder 'faq'" in report.errors[0]["error"]


# -- 5. broken, hostile and oversized files ---------------------------------------------------------------------
def test_a_broken_docx_and_hostile_names_do_not_stop_a_folder_import(ctx, rt, tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "broken.docx").write_bytes(broken_docx())
    (folder / "guide.md").write_text("# Guide\n\nTighten the bolts to 5 Nm.", encoding="utf-8")
    (folder / "..\\..\\evil.md").write_text("# Evil\n\nOutside.", encoding="utf-8")
    (folder / "....md").write_text("# Dots\n\nNo name.", encoding="utf-8")
    (folder / "z-last.txt").write_text("The last file is imported too.", encoding="utf-8")
    report = import_paths(ctx, rt.store, [folder])
    assert sorted(report.saved) == ["kb/guide", "kb/z-last"]
    [error] = report.errors
    assert error["file"] == str(folder / "broken.docx") and "save it again as .docx" in error["error"]
    assert error["error"].startswith(f"{folder / 'broken.docx'}: the document's XML is damaged")
    assert [Path(s["file"]).name for s in report.skipped] == ["....md", "..\\..\\evil.md"]  # dot files
    assert all("is hidden (its name starts with '.'); rename it" in s["reason"] for s in report.skipped)
    assert [s.path for s in sources.list_sources(ctx, rt.store)] == ["kb/guide", "kb/z-last"]


@pytest.mark.parametrize("name", ["...md", "..\\..\\evil.md", "../../evil.md", "..md"])
def test_a_file_name_that_gives_no_path_is_refused_by_name(ctx, rt, name):
    report = import_bytes(ctx, rt.store, name, b"# Title\n\nText.")
    assert report.saved == [] and report.errors[0]["file"] == name
    assert report.errors[0]["error"].startswith(f"{name}: the name gives no usable path")


def test_a_pdf_whose_stream_inflates_past_the_limit_is_refused():
    ok = pdf_with_stream(b"BT /F1 12 Tf 72 720 Td (Refunds take five days.) Tj ET")
    assert extract("ok.pdf", ok).items[0].content == "Refunds take five days."
    bomb = pdf_with_stream(b"BT /F1 12 Tf 72 720 Td (x) Tj ET " + b" " * (30 << 20))
    with pytest.raises(Exception, match="bomb.pdf: the PDF unpacks past the import limits"):
        extract("bomb.pdf", bomb)


def test_a_zip_upload_refuses_each_hostile_member_and_imports_the_rest(ctx, rt):
    archive = io.BytesIO()
    write_zip(archive, [
        ("kb/guide.md", b"# Guide\n\nTighten the bolts to 5 Nm."),
        ("kb/secret.md", b"# Secret\n\nEncrypted."),
        ("kb/forged.md", b"# Forged\n\n" + b"x" * 5_000_000),
        ("kb/broken.docx", broken_docx()),
        ("kb/.hidden.md", b"# Hidden"),
        ("../outside.md", b"# Outside"),
        ("kb/tool.exe", b"MZ"),
    ], forged={"kb/forged.md": 100}, encrypted=("kb/secret.md",))
    report = import_zip(ctx, rt.store, "kb.zip", archive.getvalue())
    assert report.saved == ["kb/guide"] and [s.path for s in sources.list_sources(ctx, rt.store)] == ["kb/guide"]
    errors = {e["file"]: e["error"] for e in report.errors}
    assert set(errors) == {"kb.zip:kb/secret.md", "kb.zip:kb/forged.md", "kb.zip:kb/broken.docx",
                           "kb.zip:../outside.md", "kb.zip:kb/tool.exe"}
    assert "encrypted" in errors["kb.zip:kb/secret.md"] and "without a password" in errors["kb.zip:kb/secret.md"]
    assert "damaged inside" in errors["kb.zip:kb/forged.md"]
    assert "the document's XML is damaged" in errors["kb.zip:kb/broken.docx"]
    assert "unsafe path" in errors["kb.zip:../outside.md"]
    assert all(e.startswith(f) for f, e in errors.items())
    assert [s["file"] for s in report.skipped] == ["kb.zip:kb/.hidden.md"]


def test_a_zip_that_declares_too_much_is_refused_whole(ctx, rt):
    archive = io.BytesIO()
    write_zip(archive, [("a.md", b"# A\n\nText.")], forged={"a.md": 300_000_000})
    report = import_zip(ctx, rt.store, "big.zip", archive.getvalue())
    assert report.saved == [] and report.errors[0]["error"].startswith("big.zip: too large")
    bad = import_zip(ctx, rt.store, "not.zip", b"PK\x03\x04 nope")
    assert bad.errors[0]["error"].startswith("not.zip: not a readable .zip")


_MEASURE = """
import json, re, sys
from core.base.errors import UserError
from core.knowledge.archives import open_zip, read_member
from core.knowledge.extract import extract
out = {}
for path in sys.argv[1:3]:
    try:
        extract(path.rsplit("/", 1)[-1], open(path, "rb").read())
        out[path] = "stored"
    except UserError as exc:
        out[path] = str(exc)
archive = open_zip(open(sys.argv[3], "rb").read(), "upload.zip", ".zip", "")
for info in archive.infolist():
    try:
        read_member(archive, info, 50_000_000, "upload.zip:" + info.filename)
        out[info.filename] = "read"
    except UserError as exc:
        out[info.filename] = str(exc)
# VmHWM is this process's peak RSS; ru_maxrss would also count the parent's peak before exec
out["maxrss_mb"] = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) / 1024
print(json.dumps(out))
"""


def test_files_that_inflate_to_a_gigabyte_are_refused_in_little_memory(tmp_path):
    """A 1 MB .docx whose document.xml inflates to 1 GB, and a .docx and a zip upload whose members inflate to
    256 MB but declare 4 KB: each is refused, and the process stays far under 500 MB."""
    types = ("[Content_Types].xml", b'<?xml version="1.0"?><Types/>')
    bomb_zip(tmp_path / "bomb.docx", "word/document.xml", extra=[types])
    bomb_zip(tmp_path / "forged.docx", "word/document.xml", 0.25, level=1, declared=4096, extra=[types])
    bomb_zip(tmp_path / "upload.zip", "kb/big.md", 0.25, level=1, declared=4096)
    assert (tmp_path / "bomb.docx").stat().st_size < 1_500_000
    files = [str(tmp_path / n) for n in ("bomb.docx", "forged.docx", "upload.zip")]
    done = subprocess.run([sys.executable, "-c", _MEASURE, *files], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "bomb.docx: the document unpacks to 1,07" in result[files[0]] and "over the limits" in result[files[0]]
    assert "forged.docx (part word/document.xml): damaged inside" in result[files[1]]
    assert "upload.zip:kb/big.md: damaged inside" in result["kb/big.md"]
    assert result["maxrss_mb"] < 500, result


# -- acceptance: the hostile corpus, read back --------------------------------------------------------------------
def test_the_hostile_corpus_has_no_silent_changes(ctx, rt, tmp_path):
    """Every file of a corpus of careless and hostile files is stored exactly as its text, or named by a refusal,
    a skipped row or a warning."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    expected_docs = {"corpus/latin1": SPANISH, "corpus/cp1252": "Precio: 5 € – “oferta” y envío…",
                     "corpus/utf16": "Garantía de cinco años.", "corpus/guide": "# Guide\n\nTighten the bolts to 5 Nm."}
    (folder / "latin1.txt").write_bytes(SPANISH.encode("latin-1"))
    (folder / "cp1252.txt").write_bytes(expected_docs["corpus/cp1252"].encode("cp1252"))
    (folder / "utf16.txt").write_bytes(expected_docs["corpus/utf16"].encode("utf-16"))
    (folder / "guide.md").write_bytes(b"# Guide\n\nTighten the bolts to 5 Nm.")
    (folder / "guide.txt").write_bytes(b"A second guide at the same path.")
    lines = qa_csv(TRICKY_PAIRS).count(b"\n")  # physical lines: an answer holds a line break
    (folder / "faq.csv").write_bytes(qa_csv(TRICKY_PAIRS) + b"No answer here?,\nUnquoted, comma,three\n")
    (folder / "broken.docx").write_bytes(broken_docx())
    (folder / "bad.pdf").write_bytes(b"%PDF-1.4 garbage")
    (folder / "..\\evil.md").write_bytes(b"# Evil")
    (folder / "tool.exe").write_bytes(b"MZ")
    report = import_paths(ctx, rt.store, [folder])
    for path, text in expected_docs.items():
        assert sources.get(ctx, rt.store, path).content == text, path
    assert sorted(stored_pairs(ctx, rt, "corpus/faq")) == sorted(TRICKY_PAIRS)
    stored = {s.path for s in sources.list_sources(ctx, rt.store)}
    assert stored == set(expected_docs) | {p for p in stored if p.startswith("corpus/faq/")}
    for refused in ("guide.txt", "broken.docx", "bad.pdf", "..\\evil.md", "tool.exe"):
        assert named(report, refused), refused
    assert [s["line"] for s in report.skipped if s.get("line")] == [lines + 1, lines + 2]


def test_the_cli_prints_refused_and_skipped_with_a_summary(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    assert main(["tenants", "create", "acme"]) == 0
    faq = tmp_path / "faq.csv"
    faq.write_bytes(b"question,answer\nQ1,A1\nQ2,\n")
    broken = tmp_path / "broken.docx"
    broken.write_bytes(broken_docx())
    capsys.readouterr()
    assert main(["ingest", "acme", str(faq), str(broken)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "saved faq/q1"
    assert out[1].startswith(f"REFUSED {broken}: the document's XML is damaged")
    assert out[2] == f"SKIPPED {faq} line 3 has no answer; fill in the answer column and import again"
    assert out[3].startswith("1 saved, 0 unchanged, 1 refused, 1 skipped, 0 warning(s). Train to apply")
