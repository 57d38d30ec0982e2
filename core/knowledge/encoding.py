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


def decode(data: bytes, filename: str) -> Decoded:
    """The text of ``data``: by its byte-order mark, as UTF-8, or as charset-normalizer detects it."""
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
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        raise EncodingError(f"{filename}: not a text file (no known text encoding fits); save it as UTF-8 and retry.")
    return _choose(matches, data, filename)
