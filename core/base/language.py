"""Languages: detection (py3langid, offline) and the content words of a text, per language."""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from whoosh.lang import has_stopwords, stopwords_for_language

#: Languages with a stemmer and stop words in the keyword index; others are indexed without stemming.
ANALYZED = ("es", "pt", "en")
#: Languages the detector may answer; a tenant's sources can be in any of them.
DETECTABLE = ("es", "pt", "en", "fr", "it", "de", "ca")
_WORD = re.compile(r"\w+", re.UNICODE)
_SPANISH_MARKS = re.compile(r"[¿¡]")


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(list(DETECTABLE))
    return ident


def detect(text: str, default: str = "en") -> str:
    """The most likely language code of ``text`` among DETECTABLE (``default`` when there are no words)."""
    if not _WORD.search(text or ""):
        return default
    if _SPANISH_MARKS.search(text):  # ¿ and ¡ are Spanish alone, and settle the short questions a model can't
        return "es"
    return _classify(text[:4000])


@lru_cache(maxsize=4096)
def _classify(text: str) -> str:
    """One turn asks for the language of the same question several times (loop, gate, backlog): once is enough."""
    lang, _prob = _identifier().classify(text)
    return lang


_COMBINING = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(text: str) -> str:
    """Lower-case and strip accents: 'Facturación' -> 'facturacion'."""
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text.lower()))


@lru_cache(maxsize=8)
def stopwords(lang: str) -> frozenset[str]:
    """Folded stop words of a language, plus the other analyzed languages' for mixed questions."""
    words: set[str] = set()
    for code in {lang, *ANALYZED}:
        if has_stopwords(code):
            words |= {fold(w) for w in stopwords_for_language(code)}
    return frozenset(words)


def content_words(text: str, lang: str = "en") -> list[str]:
    """Folded words that carry meaning (no stop words, no single letters), in order, unique."""
    seen, out = set(), []
    stop = stopwords(lang)
    for word in _WORD.findall(fold(text)):
        if len(word) < 2 or word in stop or word in seen:
            continue
        seen.add(word)
        out.append(word)
    return out
