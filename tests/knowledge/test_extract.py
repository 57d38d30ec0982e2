import json

import pytest

from core.knowledge import sources
from core.knowledge.extract import ExtractionError, extract_file, extract_html
from core.knowledge.ingest import import_bytes, import_html, import_paths, import_url
from tests.documents import docx_bytes, pdf_bytes

HTML = """<html><head><title>Shipping | Acme</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<main><h1>Shipping</h1><p>We ship to Spain and Portugal. \
Orders placed before 14:00 leave the warehouse the same day.</p>
<p>Delivery takes 24 to 48 hours on the mainland.</p></main>
<footer>© Acme 2026</footer><script>var tracking = 1;</script></body></html>"""


def test_markdown_title_from_heading():
    [doc] = extract_file("returns.md", b"# Returns policy\n\nYou have 30 days.")
    assert (doc.title, doc.type) == ("Returns policy", "file")
    assert "30 days" in doc.content


def test_text_in_latin1_is_decoded():
    [doc] = extract_file("notes.txt", "Devolución en 30 días".encode("latin-1"))
    assert "30 d" in doc.content and doc.title == "Notes"


def test_html_keeps_the_text_and_drops_scripts():
    [doc] = extract_file("shipping.html", HTML.encode())
    assert "Orders placed before 14:00" in doc.content
    assert "tracking" not in doc.content
    assert doc.title.startswith("Shipping")


def test_pdf_text_layer():
    [doc] = extract_file("guide.pdf", pdf_bytes(["Refunds take 5 to 7 working days.", "Keep the receipt."]))
    assert "Refunds take 5 to 7 working days." in doc.content


def test_docx_paragraphs_and_tables():
    data = docx_bytes("Price list", ["Our plans and prices."], [["Plan", "Price"], ["Pro", "19.90 EUR"]])
    [doc] = extract_file("prices.docx", data)
    assert doc.title == "Price list"
    assert "Pro | 19.90 EUR" in doc.content


def test_csv_and_jsonl_qa_pairs():
    csv_pairs = extract_file("faq.csv", b'question,answer\n"Do you ship to France?","No, only Spain and Portugal."\n')
    assert [(p.type, p.title, p.content) for p in csv_pairs] == [
        ("qa", "Do you ship to France?", "No, only Spain and Portugal.")]
    lines = "\n".join(json.dumps(x) for x in [{"pregunta": "¿Horario?", "respuesta": "9 a 18"},
                                              {"question": "Q2", "answer": "A2"}])
    assert [p.title for p in extract_file("faq.jsonl", lines.encode())] == ["¿Horario?", "Q2"]


@pytest.mark.parametrize("name, data, message", [
    ("empty.md", b"", "empty"),
    ("photo.png", b"\x89PNG", "not supported"),
    ("broken.pdf", b"%PDF-1.4 garbage", "not a readable PDF"),
    ("broken.docx", b"not a zip", "not a readable .docx"),
    ("faq.csv", b"name,value\nx,y\n", "no Q&A pairs"),
    ("faq.jsonl", b'{"question": "q"}\n[1, 2]\n', "not a JSON object"),
    ("faq.jsonl", b"{not json}\n", "line 1 is not JSON"),
    ("blank.html", b"<html><body><script>x()</script></body></html>", "no readable text"),
])
def test_bad_files_get_a_clear_error(name, data, message):
    with pytest.raises(ExtractionError, match=message) as info:
        extract_file(name, data)
    assert name in str(info.value)


def test_pasted_html_page():
    page = extract_html(HTML, "https://acme.example/shipping")
    assert page.type == "web" and page.url == "https://acme.example/shipping"


def test_folder_import_keeps_structure_and_survives_bad_files(ctx, rt, tmp_path):
    root = tmp_path / "helpcenter"
    (root / "policies").mkdir(parents=True)
    (root / "policies" / "returns.md").write_text("# Returns\n\n30 days.", encoding="utf-8")
    (root / "policies" / "broken.pdf").write_bytes(b"%PDF-1.4 nope")
    (root / "faq.csv").write_text("question,answer\nWhere are you?,Madrid\n", encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG")
    (root / ".hidden.md").write_text("secret", encoding="utf-8")
    report = import_paths(ctx, rt.store, [root], prefix="kb")
    assert sorted(report.saved) == ["kb/helpcenter/faq/where-are-you", "kb/helpcenter/policies/returns"]
    assert {e["file"].rsplit("/", 1)[-1] for e in report.errors} == {"broken.pdf", "logo.png"}
    assert sources.get(ctx, rt.store, "kb/helpcenter/faq/where-are-you").type == "qa"
    again = import_paths(ctx, rt.store, [root], prefix="kb")
    assert sorted(again.unchanged) == sorted(report.saved) and again.saved == []


def test_import_bytes_html_and_unreachable_url(ctx, rt):
    report = import_bytes(ctx, rt.store, "shipping.html", HTML.encode(), prefix="web")
    assert report.saved == ["web/shipping"]
    pasted = import_html(ctx, rt.store, "web/pasted", HTML, "https://acme.example/s")
    assert pasted.saved == ["web/pasted"] and sources.get(ctx, rt.store, "web/pasted").type == "web"
    failed = import_url(ctx, rt.store, "web/remote", "http://127.0.0.1:9/nothing", timeout=2)
    assert failed.saved == [] and "import the file" in failed.errors[0]["error"]
    bad = import_url(ctx, rt.store, "web/remote", "ftp://example.com/x")
    assert "not an http(s) URL" in bad.errors[0]["error"]
