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
#: e-mail addresses and links say nothing of the language they are written in ('carla@example.com' reads as pt)
_ADDRESSES = re.compile(r"\S+@\S+|https?://\S+|www\.\S+", re.IGNORECASE)


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
    words = _ADDRESSES.sub(" ", text[:4000])
    if not _WORD.search(words):
        words = text[:4000]
    lang, probability = _classify(words)
    if probability < UNSURE:
        return _short_vote(words) or lang
    return lang


#: function words only one of the analyzed languages writes: a short message the statistical model is unsure of
#: ("Cambia mi e-mail a ..." read as French, "... de contacto a ..." as Portuguese) is settled by them when they all
#: point one way
_DISTINCT = {
    "es": frozenset("mi mis el los las del quiero cambia cambiar cambie dónde donde cuánto cuanto qué cómo puedo "
                    "tengo una y pero también usted".split()),
    "pt": frozenset("meu minha meus minhas quero mudar muda alterar altere onde quanto você posso tenho uma não "
                    "também".split()),
    "en": frozenset("my the to want change please where how is can what your of and you do does have".split()),
}
SHORT_WORDS = 8
UNSURE = 0.9  # below this probability the model's guess for a short message yields to a unanimous vote


def _short_vote(text: str) -> str | None:
    words = [w.lower() for w in _WORD.findall(text)]
    if not words or len(words) > SHORT_WORDS:
        return None
    hits = {lang: sum(w in vocab for w in words) for lang, vocab in _DISTINCT.items()}
    best = max(hits, key=hits.get)
    return best if hits[best] and all(n == 0 for lang, n in hits.items() if lang != best) else None


@lru_cache(maxsize=4096)
def _classify(text: str) -> str:
    """One turn asks for the language of the same question several times (loop, gate, backlog): once is enough."""
    lang, probability = _identifier().classify(text)
    return lang, float(probability)


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
