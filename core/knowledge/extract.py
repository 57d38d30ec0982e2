"""Text out of files and web pages (K1): .md .txt .html .pdf .docx, and Q&A pairs from .csv/.jsonl.

Kept libraries do the parsing (trafilatura/html-text, pypdf, python-docx, charset-normalizer); this
module only decides titles and turns their failures into errors that say which file and what to do.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import PurePath

from core.base.errors import UserError
from core.knowledge import normalize
from core.knowledge.units import blocks

SUPPORTED = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx", ".csv", ".jsonl")
_QUESTION_KEYS = ("question", "pregunta", "pergunta", "q")
_ANSWER_KEYS = ("answer", "respuesta", "resposta", "a")


class ExtractionError(UserError):
    """A file or page could not be turned into text; the message names it and says what to do."""


@dataclass(frozen=True)
class Extracted:
    """One future source: for ``qa`` the title is the question and the content the answer."""

    title: str
    content: str
    type: str  # qa | file | web | text
    name: str = ""  # path segment suggestion for Q&A rows; empty = use the file's own name
    url: str = ""
    description: str = ""


def _decode(data: bytes, filename: str) -> str:
    if not data:
        raise ExtractionError(f"{filename}: the file is empty; nothing to import.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        best = from_bytes(data).best()
        if best is None:
            raise ExtractionError(  # noqa: B904 - `from None` would change the traceback (context)
                f"{filename}: not a text file (unknown encoding); save it as UTF-8 and retry.")
        return str(best)


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _file_title(filename: str) -> str:
    return PurePath(filename).stem.replace("-", " ").replace("_", " ").strip().capitalize()


def _first_heading(text: str) -> str:
    """The first block of canonical text when it is a heading (not a question) over more text, else ''."""
    found = blocks(text)
    if len(found) < 2 or found[0].kind != "heading":
        return ""
    return text[found[0].start:found[0].end].lstrip("#").strip()


def _markdown(text: str, filename: str) -> Extracted:
    title, body = normalize.markdown(text)
    return Extracted(title=title or _file_title(filename), content=_clean(body), type="file")


def _plain(text: str, filename: str) -> Extracted:
    body = _clean(normalize.plain_text(text))
    return Extracted(title=_first_heading(body) or _file_title(filename), content=body, type="file")


def html_to_text(html: str, url: str = "") -> tuple[str, str]:
    """(title, canonical text) of an HTML page: trafilatura's main content as markdown, made canonical (links as
    text, code kept, layout gone); html-text's layout text when trafilatura finds nothing."""
    import html_text
    import trafilatura

    text = trafilatura.extract(html, url=url or None, output_format="markdown", include_tables=True,
                               include_comments=False, include_formatting=True, include_links=True,
                               favor_recall=True)
    heading, body = normalize.markdown(text) if text else ("", "")
    if len(body.strip()) < 40:
        body = normalize.plain_text(html_text.extract_text(html, guess_layout=True))
    title = ""
    meta = trafilatura.extract_metadata(html)
    if meta is not None and meta.title:
        title = meta.title
    return (title or heading).strip(), _clean(body)


def _html(text: str, filename: str, url: str = "") -> Extracted:
    """A fetched page (``url``) is reduced to its main content; an uploaded HTML file is a document the editor
    chose: all its text is kept, with its structure (code blocks verbatim, lists, definition lists, tables)."""
    if url:
        title, body = html_to_text(text, url)
    else:
        title, body = normalize.html_page(text)
        title, body = title or _first_heading(body), _clean(body)
    if not body:
        raise ExtractionError(f"{filename}: the page has no readable text (only scripts or images?).")
    return Extracted(title=title or PurePath(filename).stem, content=body, type="web" if url else "file", url=url)


def _pdf(data: bytes, filename: str) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ExtractionError(f"{filename}: the PDF is password-protected; export an unprotected copy.")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        title = (reader.metadata.title if reader.metadata and reader.metadata.title else "") or ""
    except ExtractionError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ExtractionError(f"{filename}: not a readable PDF ({exc}); re-export it and retry.") from exc
    body = _clean(normalize.plain_text("\n\n".join(p for p in pages if p)))
    if not body:
        raise ExtractionError(f"{filename}: the PDF has no text layer (a scan?); run OCR on it or upload the text.")
    return Extracted(title=title.strip() or _first_heading(body) or PurePath(filename).stem, content=body,
                     type="file")


def _docx(data: bytes, filename: str) -> Extracted:
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise ExtractionError(f"{filename}: not a readable .docx ({exc}); save it again as Word .docx.") from exc
    blocks, title = [], document.core_properties.title or ""
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        if not title and paragraph.style is not None and paragraph.style.name.lower().startswith(("title", "heading")):
            title = text
        blocks.append(text)
    for table in document.tables:
        rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows]
        blocks.append("\n".join(rows))
    body = _clean("\n\n".join(blocks))
    if not body:
        raise ExtractionError(f"{filename}: the document has no text.")
    return Extracted(title=title.strip() or PurePath(filename).stem, content=body, type="file")


def _pick(row: dict, keys: tuple[str, ...]) -> str:
    lowered = {str(k).strip().lower(): v for k, v in row.items() if k is not None}
    for key in keys:
        if key in lowered and lowered[key] is not None:
            return str(lowered[key]).strip()
    return ""


def _qa_rows(rows: list[tuple[int, dict]], filename: str) -> list[Extracted]:
    pairs, bad = [], []
    for number, row in rows:
        question, answer = _pick(row, _QUESTION_KEYS), _pick(row, _ANSWER_KEYS)
        if not question or not answer:
            bad.append(number)
            continue
        pairs.append(Extracted(title=question, content=answer, type="qa", name=question))
    if not pairs:
        raise ExtractionError(
            f"{filename}: no Q&A pairs found; each row needs non-empty 'question' and 'answer' fields"
            + (f" (rows without them: {bad[:10]})" if bad else "")
            + "."
        )
    return pairs


def _csv(text: str, filename: str) -> list[Extracted]:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(io.StringIO(text), dialect=dialect)
    try:
        rows = [(n + 2, row) for n, row in enumerate(reader)]
    except csv.Error as exc:
        raise ExtractionError(f"{filename}: malformed CSV ({exc}).") from exc
    return _qa_rows(rows, filename)


def _jsonl(text: str, filename: str) -> list[Extracted]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ExtractionError(f"{filename}: line {number} is not JSON ({exc.msg}); one object per line.") from exc
        if not isinstance(value, dict):
            raise ExtractionError(f"{filename}: line {number} is not a JSON object with question/answer.")
        rows.append((number, value))
    return _qa_rows(rows, filename)


def extract_file(filename: str, data: bytes) -> list[Extracted]:
    """Everything importable from one file: one document, or one Q&A pair per row."""
    suffix = PurePath(filename).suffix.lower()
    if suffix not in SUPPORTED:
        raise ExtractionError(f"{filename}: '{suffix or 'no extension'}' is not supported; "
                              f"use one of {', '.join(SUPPORTED)}.")
    if suffix == ".pdf":
        return [_pdf(data, filename)]
    if suffix == ".docx":
        return [_docx(data, filename)]
    text = _decode(data, filename)
    if suffix in (".html", ".htm"):
        return [_html(text, filename)]
    if suffix == ".csv":
        return _csv(text, filename)
    if suffix == ".jsonl":
        return _jsonl(text, filename)
    extracted = _markdown(text, filename) if suffix in (".md", ".markdown") else _plain(text, filename)
    if not extracted.content:
        raise ExtractionError(f"{filename}: the file has no text.")
    return [extracted]


def extract_html(html: str, url: str = "") -> Extracted:
    """A web page pasted as HTML (or fetched from ``url``)."""
    return _html(html, url or "page.html", url)


def fetch_url(url: str, timeout: float = 15.0) -> Extracted:
    """Fetch a page and extract it; network failures become an ExtractionError that says so."""
    import httpx

    if not re.match(r"^https?://", url or ""):
        raise ExtractionError(f"{url!r} is not an http(s) URL.")
    try:
        response = httpx.get(url, timeout=timeout, follow_redirects=True, headers={"User-Agent": "Cobertura/0.1"})
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise ExtractionError(
            f"Could not fetch {url} ({exc.__class__.__name__}: {exc}). If this machine has no internet access, "
            "save the page as HTML and import the file, or paste its HTML."
        ) from exc
    kind = response.headers.get("content-type", "")
    if "html" not in kind and "text" not in kind:
        raise ExtractionError(f"{url} returned '{kind}', not a web page; download the file and import it instead.")
    return _html(response.text, url, url)
