"""The text encoding of an imported file (K1): a byte-order mark, UTF-8, or charset-normalizer's detection.

A short file in a one-byte encoding is often equally plausible in several code pages (latin-1 ``ñ`` is
cp1250 ``ń``): charset-normalizer then ranks them alike. The readings that differ are told apart by how
common their accented words are in the languages the app serves (wordfreq); when that does not settle
it, the file is read in the Western code page (cp1252, which every served language fits) and the import
says the encoding was uncertain instead of guessing silently.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from core.base.errors import UserError
from core.base.language import DETECTABLE

_BOMS = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)
_WESTERN = {"cp1252", "latin_1", "iso8859_15"}
_NON_ASCII_WORD = re.compile(r"\S*[^\x00-\x7f]\S*")
_EDGES = re.compile(r"^[\W\d_]+|[\W\d_]+$")
_CLEAR_MARGIN = 1.0  # zipf points (10x more frequent) one reading's accented words need over the other's
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
_MAX_STRAY = 1000  # a text with more bytes outside UTF-8 is in another encoding, not UTF-8 with strays
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


class EncodingError(UserError):
    """The bytes are no text in any encoding we can read; the message names the file and what to do."""


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str
    warning: str = ""  # set when the encoding was a choice between equally plausible readings


def _words(text: str) -> list[str]:
    """The distinct words with a non-ASCII character (where code pages differ), punctuation around them cut."""
    found = (_EDGES.sub("", w).lower() for w in _NON_ASCII_WORD.findall(text[:200_000]))
    return [w for w in dict.fromkeys(found) if w and not w.isascii()][:300]


def _zipf(word: str) -> float:
    """How common ``word`` is in the served languages (wordfreq zipf); a "word" with symbols inside is 0."""
    from wordfreq import zipf_frequency

    return max(zipf_frequency(word, lang) for lang in DETECTABLE) if word.isalpha() else 0.0


def _mean(words) -> float:
    words = list(words)
    return sum(_zipf(w) for w in words) / len(words) if words else 0.0


def _beats(text: str, other: str) -> bool:
    """True when the words only ``text`` has are clearly more common than the words only ``other`` has."""
    mine, theirs = set(_words(text)), set(_words(other))
    return _mean(mine - theirs) - _mean(theirs - mine) >= _CLEAR_MARGIN


@dataclass(frozen=True)
class _Reading:
    encoding: str
    could_be_from_charset: tuple[str, ...]


def _choose(matches: list, data: bytes, filename: str) -> Decoded:
    readings: dict[str, object] = {}
    for match in matches:  # charset-normalizer's order: least "mess" first
        readings.setdefault(str(match), match)
    try:  # on a few bytes the detector may leave out the code page every served language is written in
        readings.setdefault(data.decode("cp1252"), _Reading("cp1252", ("cp1252",)))
    except UnicodeDecodeError:
        pass
    if len(readings) == 1:
        return Decoded(*next((t, m.encoding) for t, m in readings.items()))
    ranked = sorted(readings, key=lambda t: -_mean(_words(t)))  # stable: ties keep the detector's order
    if all(_beats(ranked[0], other) for other in ranked[1:]):
        return Decoded(ranked[0], readings[ranked[0]].encoding)
    chosen = next((t for t in ranked if _WESTERN & set(readings[t].could_be_from_charset)), ranked[0])
    other = next(t for t in ranked if t != chosen)
    differs = next((w for w in _words(other) if w not in chosen.lower()), "")
    return Decoded(chosen, readings[chosen].encoding, warning=(
        f"{filename}: the text encoding is uncertain; read as {readings[chosen].encoding}"
        + (f" ({readings[other].encoding} would give “{differs}”)" if differs else f" (or {readings[other].encoding})")
        + ". Check the stored text; if it looks wrong, save the file as UTF-8 and import it again."))


def html_charset(data: bytes) -> str:
    """The code page an HTML file declares in a ``<meta charset>`` (or http-equiv) tag in its first 1024 bytes,
    as the HTML standard's prescan reads it ('' when none, or none Python knows)."""
    found = _META_CHARSET.search(data[:1024])
    try:
        codec = codecs.lookup(found.group(1).decode("ascii")).name if found else ""
    except LookupError:
        return ""
    return "" if codec.startswith(("utf-16", "utf-32")) else codec  # a UTF-16 declaration in ASCII bytes is false


def _mixed_utf8(data: bytes, filename: str) -> Decoded | None:
    """A UTF-8 text with a few bytes from another code page pasted in (most of its accents are valid UTF-8
    sequences): read as UTF-8, the stray bytes as cp1252, and said with the lines they are on."""
    pieces, stray, start, line, view = [], [], 0, 1, memoryview(data)
    sequences = min(len(_UTF8_SEQUENCE.findall(data)), _MAX_STRAY)
    while len(stray) < sequences:  # each stray byte, found by UTF-8's own decoder, costs one valid sequence
        try:
            pieces.append(codecs.utf_8_decode(view[start:], "strict", True)[0])
            break
        except UnicodeDecodeError as exc:
            at = start + exc.start
            pieces.append(codecs.utf_8_decode(view[start:at], "strict", True)[0])
            pieces.append(data[at:at + 1].decode("cp1252", errors="ignore") or data[at:at + 1].decode("latin-1"))
            line += data.count(b"\n", start, at)
            stray.append(line)
            start = at + 1
    else:
        return None
    text = "".join(pieces)
    lines = ", ".join(str(n) for n in dict.fromkeys(stray[:10]))
    return Decoded(text, "utf-8", warning=(
        f"{filename}: UTF-8 text with {len(stray)} byte(s) in another encoding (line(s) {lines}), read as cp1252 "
        "(Windows Western). Check those lines; if they look wrong, save the file as UTF-8 and import it again."))


def decode(data: bytes, filename: str, declared: str = "") -> Decoded:
    """The text of ``data``: by its byte-order mark, as UTF-8, in the ``declared`` code page (an HTML file's
    ``<meta charset>``) when it fits, or as charset-normalizer detects it."""
    if not data:
        raise EncodingError(f"{filename}: the file is empty; nothing to import.")
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data.decode(codec), codec)
            except UnicodeDecodeError:
                if codec != "utf-32":
                    raise EncodingError(  # noqa: B904 - the decode error says nothing more to a person
                        f"{filename}: starts with a {codec.upper()} byte-order mark but is not valid {codec.upper()}; "
                        "save it again as UTF-8 and retry.")
    from charset_normalizer import from_bytes

    if data.count(b"\x00") * 8 > len(data):  # UTF-16 without a byte-order mark is valid UTF-8 full of NULs
        best = from_bytes(data).best()
        if best is not None and best.encoding.startswith(("utf_16", "utf_32")):
            return Decoded(str(best), best.encoding)
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    if declared:
        try:
            return Decoded(data.decode(declared), declared)
        except (UnicodeDecodeError, LookupError):
            pass  # the declaration is wrong: detect
    mixed = _mixed_utf8(data, filename)
    if mixed is not None:
        return mixed
    matches = list(from_bytes(data))
    if not matches:
        raise EncodingError(f"{filename}: not a text file (no known text encoding fits); save it as UTF-8 and retry.")
    return _choose(matches, data, filename)
