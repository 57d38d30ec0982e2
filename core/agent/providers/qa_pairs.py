"""Q&A pairs as answers (A1): a pair answers its own question (its yes or no included), a question that only adds
a qualifier to it (its facts, without the yes or no), and no question that names what it does not mention; close
pairs that disagree are no answer. Pure functions the offline responder composes with."""
from __future__ import annotations

import re
from typing import Sequence

from core.agent.injection import REMOVED
from core.agent.providers.answerability import carries, missing_words, names_of
from core.base.language import detect, fold
from core.base.text import sentences as text_sentences
from core.grounding.claims import POLARITY
from core.knowledge.keyword_index import terms

_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[¿¡\"'«“(]?[A-ZÁÉÍÓÚÑÇÀÂÊÔÃÕ0-9])|\n+")


def sentences(text: str) -> list[str]:
    """Sentences of a passage (Q&A: the answer part only)."""
    return [s.strip() for s in _SENTENCE.split(text) if s and len(s.strip()) > 2]


def lang_of(passage: dict) -> str:
    return passage.get("language") or detect(passage.get("text", ""))


def claims_of(sentence: str) -> list[str]:
    """The sentence cut where sources are cut (``core.base.text``), each piece to carry its citation; the gate
    ends a claim at every cited terminator, so no piece is left uncited."""
    return text_sentences(sentence) or [sentence]


def as_claim(sentence: str) -> str:
    """A sentence ready to carry a citation: trailing punctuation kept, list markers dropped."""
    return re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", sentence).strip()


def compose_qa(tuning, question: str, lang: str, best: dict, passages: list[dict], unknown: Sequence[str],
           own: bool) -> str:
    """The answer of the Q&A pair ``best``, each sentence cited; "" when the pair does not answer. Only the
    pair's own question gets its yes or no: a question that adds to it ("…a plazos un pedido de 100 €?") gets
    the answer's facts without it, and one naming what the pair does not mention no answer from it."""
    # a pair the variant model judged is sure by now (the unsure ones were left out above)
    covered = own or "phrasings_agree" in best or (
        float(best.get("similarity", 0.0)) >= tuning.qa_min_similarity and qa_agrees(tuning, passages, question, lang))
    if not covered:
        return ""
    answer = [s for s in sentences(qa_answer(best["text"])) if REMOVED not in s]
    # names and codes only: a pair's question stands for its variants ('play <any song>'), whose words vary
    if missing_words(question, lang, list(unknown), best["text"], lang_of(best) == lang, rare_words=False):
        return ""  # the question names what the pair does not ('…a plazos con bitcoin?'): another question
    if not answer:
        return ""
    near = own or asks_more(question, lang, best["text"])  # the pair's question, or it plus a qualifier
    if own:
        return cited_all(answer, best["id"])
    # a name the question adds that the pair does not carry ('…a plazos con Bizum?'): the pair does not say
    absent = [w for w in names_of(question, lang) if not carries(w, best["text"])]
    facts = [f for s in answer if (f := without_polarity(s))]
    if near and facts:
        return (f"{missing_mark(absent)}\n\n" if absent else "") + cited_all(facts, best["id"])
    if absent or len(answer) > 1:
        # a long answer is released only for (nearly) the pair's own question: close-but-different
        # questions ("¿Alquiláis bicicletas?" near "¿Montáis la bicicleta?") got wrong long answers
        return ""
    return cited_all(answer, best["id"])

def qa_agrees(tuning, passages: list[dict], question: str = "", lang: str = "") -> bool:
    """The Q&A pairs near the top vote with their similarity: the top answer must carry more than
    ``qa_vote_share`` of the votes within ``qa_agreement_margin`` of the best pair, where a text passage
    as close as the pair votes too, against. Close passages that say something else mean the question
    is not really this pair's. A passage that does not carry a name of the question the top pair carries
    ('Bizum') takes no part: it is about something else, however close it embeds."""
    t = tuning
    top = passages[0]
    names = [w for w in names_of(question, lang) if carries(w, top["text"])] if question else []
    passages = [p for p in passages if all(carries(w, p["text"]) for w in names)]
    top_answer = qa_answer(top["text"]).strip().lower()
    floor = float(top.get("similarity", 0)) - t.qa_agreement_margin
    votes = [(float(p.get("similarity", 0)), qa_answer(p["text"]).strip().lower())
             for p in passages if p.get("type") == "qa" and float(p.get("similarity", 0)) >= floor]
    # a text with a sentence at least as close to the question as the pair is a competing answer: it votes
    # against (without it the verdict hung on which other pairs happened to be selected)
    best_sim = float(top.get("similarity", 0))
    votes += [(s, None) for p in passages if p.get("type") != "qa"
              for s in [float(p.get("best_sentence_similarity", p.get("similarity", 0)))] if s >= best_sim]
    total = sum(sim for sim, _ in votes)
    return total > 0 and sum(sim for sim, answer in votes if answer == top_answer) / total > t.qa_vote_share


def qa_answer(text: str) -> str:
    """A Q&A chunk is 'question\\nanswer': the answer part."""
    return text.split("\n", 1)[1].strip() if "\n" in text else text


#: Share of content words two questions must have in common (Jaccard) to count as the same question.
SAME_QUESTION = 0.75


def same_question(question: str, lang: str, qa_text: str) -> bool:
    """The visitor asked (nearly) the Q&A pair's own question: the same content words, give or take one in four."""
    asked = set(terms(lang, question))
    pair = set(terms(lang, qa_text.split("\n", 1)[0]))
    return bool(asked and pair) and len(asked & pair) / len(asked | pair) >= SAME_QUESTION


def own_pair(question: str, lang: str, passages: list[dict]) -> dict | None:
    """The Q&A pair written for this very question (the same content words), when such pairs agree on the answer:
    an editor's pair answers its question from the next turn on, whatever other passages score."""
    asked = set(terms(lang, question))
    own = [p for p in passages if p.get("type") == "qa" and asked
           and set(terms(lang, p["text"].split("\n", 1)[0])) == asked]
    answers = {qa_answer(p["text"]).strip().lower() for p in own}
    return own[0] if len(answers) == 1 else None


def asks_more(question: str, lang: str, qa_text: str) -> bool:
    """The visitor's question holds every content word of the pair's question, and more (a qualifier)."""
    asked = set(terms(lang, question))
    pair = set(terms(lang, qa_text.split("\n", 1)[0]))
    return bool(pair) and pair < asked


_POLARITY_LEAD = re.compile(r"^\s*(?:%s)\s*(?:[,.;:!—–-]+\s*|$)" % "|".join(  # noqa: UP031
    sorted((re.escape(w) for w in POLARITY), key=len, reverse=True)), re.IGNORECASE)


def without_polarity(sentence: str) -> str:
    """A Q&A sentence without its leading yes or no ("Sí, en pedidos…" -> "En pedidos…"); "" when that is all."""
    lead = _POLARITY_LEAD.match(fold(sentence))
    if not lead or len(fold(sentence)) != len(sentence):  # folding keeps the length of Latin text
        return sentence.strip()
    rest = sentence[lead.end():].strip()
    return rest[:1].upper() + rest[1:] if rest and any(c.isalnum() for c in rest) else ""


def missing_mark(missing: list[str]) -> str:
    """The partial-answer mark the loop turns into the localized 'our material does not mention …' sentence."""
    return "[[missing:" + "|".join(w.replace("]", "").replace("|", " ") for w in missing) + "]]"


def cited_all(answer: list[str], chunk_id: str) -> str:
    """Every sentence carries the citation: the gate judges each claim on its own."""
    return " ".join(f"{as_claim(s)} [[cite:{chunk_id}]]" for s in answer)
