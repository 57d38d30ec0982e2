"""Q&A pairs from .csv and .jsonl files (K1): every row is stored exactly or refused with its line number.

CSV is read with the standard dialect only: ``"`` quotes (doubled inside a field), and the delimiter
(``,`` ``;`` or tab) that makes the header line name a question and an answer column. Nothing is sniffed:
a sniffer that picks ``'`` as the quote character cuts answers at their commas without saying so.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field

QUESTION_KEYS = ("question", "pregunta", "pergunta", "q")
ANSWER_KEYS = ("answer", "respuesta", "resposta", "a")
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
_HEADER_HELP = ("the first line must name the columns, e.g. question,answer (or pregunta/respuesta, "
                "pergunta/resposta), separated by commas, semicolons or tabs")


_EXCEL_SEP = re.compile(r"\Asep=([,;\t])[ \t]*(?:\r\n|\r|\n|\Z)", re.IGNORECASE)  # Excel's "sep=;" first line
csv.field_size_limit(max(csv.field_size_limit(), 100_000_000))  # an answer may be as long as a file (100 MB)


class QAFileError(ValueError):
    """The whole file cannot be read as Q&A pairs; the message says why (the caller adds the file name)."""


@dataclass
class QARows:
    """The pairs of one file (line, question, answer), the rows refused (line, reason) and notes for the editor."""

    pairs: list[tuple[int, str, str]] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _column(names: list[str], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        if key in names:
            return names.index(key)
    return None


def _parse_header(line: str, delimiter: str) -> list[str] | None:
    try:
        return [f.strip().lower() for f in next(csv.reader([line], delimiter=delimiter, quotechar='"',
                                                             skipinitialspace=True, strict=True), [])]
    except csv.Error:
        return None


def _delimiter(text: str) -> str:
    """The delimiter with which the first non-empty line names a question and an answer column."""
    header = next((line for line in text.splitlines() if line.strip()), "")
    fits = []
    for delimiter in DELIMITERS:
        names = _parse_header(header, delimiter)
        if names and _column(names, QUESTION_KEYS) is not None and _column(names, ANSWER_KEYS) is not None:
            fits.append((len(names), delimiter))
    if not fits:
        raise QAFileError(f"no Q&A pairs found: {_HEADER_HELP} (found {header[:80]!r}).")
    return max(fits)[1]


def _check_row(row: list[str], width: int, delimiter: str) -> str:
    """Why a row cannot be stored exactly ('' when it can), said of the row ("has ...")."""
    if len(row) > width and any(f.strip() for f in row[width:]):
        return (f"has {len(row)} fields but the header has {width}: a question or answer containing a "
                f"{DELIMITERS[delimiter]} must be in double quotes (\"like, this\"); fix the row and import again")
    return ""


def _lines(text: str) -> str:
    """Line breaks inside a question or an answer as ``\\n``, as every imported text is stored."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _pair(number: int, question: str, answer: str, into: QARows) -> None:
    question, answer = _lines(question), _lines(answer)
    if not question and not answer:
        into.refused.append((number, "is empty (no question, no answer)"))
    elif not question:
        into.refused.append((number, "has no question; fill in the question column and import again"))
    elif not answer:
        into.refused.append((number, "has no answer; fill in the answer column and import again"))
    else:
        into.pairs.append((number, question, answer))


def csv_rows(text: str, delimiter: str = "") -> QARows:
    """Q&A rows of a CSV text (``delimiter``: a TSV's tab; else the header's, or the one an Excel ``sep=`` line
    names). Raises QAFileError for a file that cannot be read at all (bad header, bad quoting)."""
    start = 1
    excel = _EXCEL_SEP.match(text)
    if excel:
        delimiter, start = excel.group(1), 2
        text = text[excel.end():]
    delimiter = delimiter or _delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"', doublequote=True,
                        skipinitialspace=True, strict=True)
    out, header, offset = QARows(), None, start - 1
    try:
        for row in reader:
            number, start = start, reader.line_num + 1 + offset
            if not any(f.strip() for f in row):
                continue  # a blank line holds nothing
            if header is None:
                header = [f.strip().lower() for f in row]
                q, a = _column(header, QUESTION_KEYS), _column(header, ANSWER_KEYS)
                if q is None or a is None:
                    raise QAFileError(f"no Q&A pairs found: {_HEADER_HELP} (found {row!r:.80}).")
                extra = [n for i, n in enumerate(header) if i not in (q, a) and n]
                if extra:
                    out.warnings.append(f"columns not imported: {', '.join(extra)} (only the question and the "
                                        "answer are stored)")
                continue
            reason = _check_row(row, len(header), delimiter)
            if reason:
                out.refused.append((number, reason))
                continue
            cells = row + [""] * (len(header) - len(row))
            _pair(number, cells[q].strip(), cells[a].strip(), out)
    except csv.Error as exc:
        raise QAFileError(f"line {start}: malformed CSV ({exc}); a field with quotes, commas or line breaks must "
                          "be in double quotes, with its own quotes doubled (\"say \"\"hi\"\"\"). Nothing from this "
                          "file was imported.") from exc
    return out


class _NotANumber(ValueError):
    """NaN and Infinity: JavaScript's, not JSON's; no answer is stored as 'nan'."""


def _constant(name: str):
    raise _NotANumber(name)


def _text(value) -> str | None:
    """A field as text: a string, or a number exactly as the line writes it (parsed as text); else None."""
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else None


def _load(line: str):
    return json.loads(line, parse_int=str, parse_float=str, parse_constant=_constant)


def jsonl_rows(text: str) -> QARows:
    """Q&A rows of a JSONL text, one object per line; a bad line is refused with its number, the rest kept."""
    out, extra = QARows(), {}
    for number, line in enumerate(text.split("\n"), start=1):  # JSON strings may hold U+2028 and other breaks
        if not line.strip():
            continue
        try:
            value = _load(line)
        except _NotANumber as exc:
            out.refused.append((number, f"has {exc} where a question or an answer must be text; quote it"))
            continue
        except json.JSONDecodeError as exc:
            out.refused.append((number, f"is not JSON ({exc.msg}); write one object per line"))
            continue
        if not isinstance(value, dict):
            out.refused.append((number, "is not a JSON object with question/answer fields"))
            continue
        fields = {str(k).strip().lower(): v for k, v in value.items()}
        q_key = next((k for k in QUESTION_KEYS if k in fields), None)
        a_key = next((k for k in ANSWER_KEYS if k in fields), None)
        extra.update(dict.fromkeys(k for k in fields if k not in (q_key, a_key)))
        question, answer = _text(fields.get(q_key)), _text(fields.get(a_key))
        if question is None or answer is None:
            out.refused.append((number, "has a question or an answer that is not text"))
            continue
        _pair(number, question, answer, out)
    if extra:
        out.warnings.append(f"fields not imported: {', '.join(extra)} (only the question and the answer are stored)")
    return out
