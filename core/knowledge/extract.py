"""Text out of files and web pages (K1): .md .txt .html .pdf .docx, and Q&A pairs from .csv/.jsonl.

Kept libraries do the parsing (trafilatura/html-text, pypdf, python-docx, charset-normalizer); this
module only decides titles and turns their failures into errors that say which file and what to do.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import PurePath

from core.base.errors import UserError
from core.knowledge import normalize, qa_files
from core.knowledge.archives import ArchiveError, check_docx
from core.knowledge.encoding import EncodingError, decode, html_charset
from core.knowledge.units import blocks

SUPPORTED = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx", ".csv", ".tsv", ".jsonl")
PDF_MAX_STREAM = 20_000_000  # bytes one PDF stream may inflate to (pypdf's own limits, lowered from 75 MB)
_BINARY = (  # files of another kind, renamed: their bytes would otherwise be "read" as text in some code page
    (b"%PDF-", "a PDF document", "rename it to .pdf and import it again"),
    (b"PK\x03\x04", "a zip package (a .docx, .xlsx or .zip)", "give it its real extension and import it again"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office document (.doc, .xls)", "save it as .docx or as text"),
    (b"{\\rtf", "an RTF document", "save it as .docx or as plain text and import that"),
    (b"\x89PNG", "a PNG image", "import its text instead"),
    (b"\xff\xd8\xff", "a JPEG image", "import its text instead"),
    (b"GIF8", "a GIF image", "import its text instead"),
)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


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
    line: int = 0  # the line of a Q&A row in its file


@dataclass
class Extraction:
    """What one file yields: its sources, the Q&A rows refused (line, reason), and notes (an uncertain encoding,
    columns not imported), each message starting with the file name."""

    items: list[Extracted] = field(default_factory=list)
    refused_rows: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _decode(data: bytes, filename: str, warnings: list[str]) -> str:
    """The text of a text file; a renamed binary file is refused; NUL bytes are taken out and said."""
    for magic, kind, advice in _BINARY:
        if data.startswith(magic):
            raise ExtractionError(f"{filename}: not a text file: its bytes are {kind}; {advice}.")
    html = PurePath(filename).suffix.lower() in (".html", ".htm")
    try:
        decoded = decode(data, filename, html_charset(data) if html else "")
    except EncodingError as exc:
        raise ExtractionError(str(exc)) from exc
    if decoded.warning:
        warnings.append(decoded.warning)
    text = decoded.text
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        warnings.append(f"{filename}: {text.count(chr(0))} NUL byte(s) taken out (the first on line {line}); a text "
                        "file has none, so check the stored text against the file.")
        text = text.replace("\x00", "")
    return text


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


def _front_matter(text: str, filename: str, warnings: list[str]) -> tuple[dict, str]:
    """A markdown file's YAML front matter (``---`` lines around ``key: value`` lines) and the text after it; a
    block that is not a YAML mapping is no front matter and stays text."""
    import yaml

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    found = _FRONT_MATTER.match(text)
    try:
        meta = yaml.safe_load(found.group(1)) if found else None
    except yaml.YAMLError:
        meta = None
    if not isinstance(meta, dict) or not meta:
        return {}, text
    meta = {str(k).strip().lower(): v for k, v in meta.items()}
    extra = [k for k in meta if k not in ("title", "description")]
    if extra:
        warnings.append(f"{filename}: front matter fields not imported: {', '.join(extra)} (its title and "
                        "description are kept)")
    return meta, text[found.end():]


def _markdown(text: str, filename: str, warnings: list[str]) -> Extracted:
    meta, text = _front_matter(text, filename, warnings)
    title, body = normalize.markdown(text)
    known = {k: str(meta[k]).strip() for k in ("title", "description") if isinstance(meta.get(k), str | int | float)}
    return Extracted(title=known.get("title") or title or _file_title(filename), content=_clean(body), type="file",
                     description=known.get("description", ""))


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


def _open_without_password(reader) -> bool:
    """True when an encrypted PDF opens with the empty password (only copying or printing is restricted)."""
    try:
        return bool(reader.decrypt(""))
    except Exception:  # noqa: BLE001 - an unsupported cipher or a broken dictionary is a PDF that stays locked
        return False


def _pdf(data: bytes, filename: str) -> Extracted:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError, PyPdfError

    limits = {k: PDF_MAX_STREAM for k in ("zlib_maximum_output_length", "lzw_maximum_output_length",
                                          "run_length_maximum_output_length", "maximum_declared_stream_length",
                                          "array_based_stream_maximum_output_length", "image_maximum_buffer_size")}
    try:
        with apply_configuration(**limits):
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not _open_without_password(reader):
                raise ExtractionError(f"{filename}: the PDF is password-protected; export an unprotected copy.")
            pages = [(page.extract_text() or "").strip() for page in reader.pages]
            title = (reader.metadata.title if reader.metadata and reader.metadata.title else "") or ""
    except ExtractionError:
        raise
    except LimitReachedError as exc:
        raise ExtractionError(f"{filename}: the PDF unpacks past the import limits ({exc}); export it again "
                              "(print to PDF) or split it.") from exc
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AttributeError, IndexError) as exc:
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
    from docx.table import Table
    from lxml.etree import LxmlError

    try:
        check_docx(data, filename)
    except ArchiveError as exc:
        raise ExtractionError(str(exc)) from exc
    try:
        document = docx.Document(io.BytesIO(data))
    except LxmlError as exc:
        raise ExtractionError(f"{filename}: the document's XML is damaged ({exc}); open it in Word or LibreOffice "
                              "and save it again as .docx.") from exc
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise ExtractionError(f"{filename}: not a readable .docx ({exc}); save it again as Word .docx.") from exc
    blocks, title = [], document.core_properties.title or ""
    for part in document.iter_inner_content():  # paragraphs and tables in the order of the document
        if isinstance(part, Table):
            blocks.append(_docx_table(part))
            continue
        text = part.text.strip()
        if not text:
            continue
        if not title and part.style is not None and part.style.name.lower().startswith(("title", "heading")):
            title = text
        blocks.append(text)
    body = _clean("\n\n".join(b for b in blocks if b))
    if not body:
        raise ExtractionError(f"{filename}: the document has no text.")
    return Extracted(title=title.strip() or PurePath(filename).stem, content=body, type="file")


def _docx_table(table) -> str:
    """A Word table as ``a | b`` rows: a cell merged across columns once, one merged down its rows left empty
    below its first row (python-docx gives a merged cell at every grid position it covers)."""
    rows, above = [], []
    for row in table.rows:
        cells, seen = [], []
        for cell in row.cells:
            if any(cell._tc is tc for tc in seen):
                continue
            seen.append(cell._tc)
            cells.append("" if any(cell._tc is tc for tc in above) else cell.text.strip())
        above += seen
        rows.append(" | ".join(cells))
    return "\n".join(r for r in rows if r.strip(" |"))


def _qa(text: str, suffix: str, filename: str, out: Extraction) -> None:
    try:
        rows = qa_files.jsonl_rows(text) if suffix == ".jsonl" else \
            qa_files.csv_rows(text, "\t" if suffix == ".tsv" else "")
    except qa_files.QAFileError as exc:
        raise ExtractionError(f"{filename}: {exc}") from exc
    out.warnings += [f"{filename}: {w}" for w in rows.warnings]
    out.refused_rows += rows.refused
    out.items += [Extracted(title=q, content=a, type="qa", name=q, line=n) for n, q, a in rows.pairs]
    if not out.items:
        shown = "; ".join(f"line {n} {why}" for n, why in rows.refused[:5])
        raise ExtractionError(f"{filename}: no Q&A pairs found; each row needs a non-empty question and answer"
                              + (f" ({shown})" if shown else "") + ".")


def _extract(filename: str, data: bytes, suffix: str, out: Extraction) -> None:
    if suffix == ".pdf":
        out.items.append(_pdf(data, filename))
        return
    if suffix == ".docx":
        out.items.append(_docx(data, filename))
        return
    text = _decode(data, filename, out.warnings)
    if suffix in (".html", ".htm"):
        out.items.append(_html(text, filename))
    elif suffix in (".csv", ".tsv", ".jsonl"):
        _qa(text, suffix, filename, out)
    else:
        extracted = _markdown(text, filename, out.warnings) if suffix in (".md", ".markdown") else \
            _plain(text, filename)
        if not extracted.content:
            raise ExtractionError(f"{filename}: the file has no text.")
        out.items.append(extracted)


def extract(filename: str, data: bytes) -> Extraction:
    """Everything importable from one file (one document, or one Q&A pair per row), the rows refused and the
    notes. Raises ExtractionError, naming the file and what to do, when nothing of it can be imported."""
    suffix = PurePath(filename).suffix.lower()
    if suffix not in SUPPORTED:
        raise ExtractionError(f"{filename}: '{suffix or 'no extension'}' is not supported; "
                              f"use one of {', '.join(SUPPORTED)}.")
    if not data:
        raise ExtractionError(f"{filename}: the file is empty; nothing to import.")
    out = Extraction()
    try:
        _extract(filename, data, suffix, out)
    except ExtractionError:
        raise
    except Exception as exc:  # a parser's failure on a hostile file refuses that file, never the batch
        raise ExtractionError(f"{filename}: could not be read ({type(exc).__name__}: {str(exc)[:200]}); open it in "
                              "its own program, save it again and retry.") from exc
    return out


def extract_file(filename: str, data: bytes) -> list[Extracted]:
    """The sources of one file (``extract`` also gives the rows refused and the notes)."""
    return extract(filename, data).items


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
