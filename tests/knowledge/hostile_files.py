"""Hostile and careless import files built in tests: CSVs written by Python's csv module, text in legacy
encodings, .docx packages with broken XML, zips that lie about their sizes or are encrypted, PDFs whose
streams inflate past the limits."""
from __future__ import annotations

import csv
import io
import zipfile
import zlib

from tests.documents import docx_bytes, pdf_of_stream

# 33 pairs a dialect sniffer misreads (it takes "'" for the quote character and cuts every quoted answer at its
# first comma): commas, double quotes, apostrophes, line breaks, semicolons, tabs
TRICKY_PAIRS = [
    ("What's the 'Pro' plan?", 'It costs 10 €, "no" fees, and it\'s monthly.'),
    ("Can I pay 'later'?", 'Yes, "Klarna", in 3 payments.'),
    ("¿Envían a Canarias?", "Sí, en 5 a 8 días; el envío cuesta 9,90 €."),
    ("Is there a \"student\" discount?", "Yes: 15%, with a valid card.\nShow it at the till."),
    ("Horário?", "Das 9h às 18h, de segunda a sexta\t(exceto feriados)."),
    ("Quote 'single' and \"double\"", "'a', \"b\", 'c'"),
] + [(f"Is the 'model {n}' in stock?", f"Use the 'Express' option, it ships in {n} days.") for n in range(3)] \
  + [(f"Question {n}?", f"Answer {n}: first, second, and third part.") for n in range(24)]


def qa_csv(pairs, delimiter: str = ",", header=("question", "answer")) -> bytes:
    """A Q&A CSV exactly as Python's csv module writes it."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(header)
    writer.writerows(pairs)
    return buffer.getvalue().encode("utf-8")


def rezip(data: bytes, replace: dict[str, bytes]) -> bytes:
    """A copy of the zip ``data`` with some members' bytes replaced."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info.filename, replace.get(info.filename, source.read(info)))
    return out.getvalue()


def broken_docx() -> bytes:
    """A real .docx whose document.xml is cut in the middle of a tag."""
    good = docx_bytes("Broken", ["This paragraph will not survive."])
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        xml = z.read("word/document.xml")
    return rezip(good, {"word/document.xml": xml[: len(xml) // 2]})


def write_zip(target, members: list[tuple[str, bytes]], *, level: int = 6, forged: dict[str, int] | None = None,
              encrypted: tuple[str, ...] = ()) -> None:
    """A zip with ``members``; ``forged`` rewrites declared sizes in the central directory, ``encrypted`` sets the
    encryption flag there (zipfile cannot write encrypted members; a reader sees the flag all the same)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for name, data in members:
            z.writestr(name, data)
        for info in z.infolist():
            if info.filename in (forged or {}):
                info.file_size = forged[info.filename]
            if info.filename in encrypted:
                info.flag_bits |= 0x1


def bomb_zip(target, member: str, gigabytes: float = 1.0, *, level: int = 9, declared: int | None = None,
             extra: list[tuple[str, bytes]] = ()) -> None:
    """A zip whose ``member`` inflates to ``gigabytes`` GB of one repeated XML run (about 1 MB compressed at
    level 9); ``declared`` forges the size its central directory states."""
    chunk = b"<w:t>" + b"a" * (1 << 20) + b"</w:t>"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for name, data in extra:
            z.writestr(name, data)
        with z.open(member, "w", force_zip64=True) as out:
            for _ in range(int(gigabytes * 1024)):
                out.write(chunk)
        if declared is not None:
            z.getinfo(member).file_size = declared


def pdf_with_stream(content: bytes) -> bytes:
    """A one-page PDF whose content stream is ``content``, FlateDecode-compressed, with a correct xref table."""
    return pdf_of_stream(zlib.compress(content, 9), b" /Filter /FlateDecode")
