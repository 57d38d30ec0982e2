"""What makes a found sentence an answer to this question (pure checks of the offline responder)."""
from __future__ import annotations

import pytest

from core.agent.providers.answerability import (
    asked_kind,
    asked_property,
    has_figure,
    missing_words,
    name_like,
    rare,
    restates,
    shares_name,
)


@pytest.mark.parametrize("question, unknown, passage, same, missing", [
    ("¿Tenéis tienda en Valencia?", ["Valencia"], "Tienda de Madrid. Tienda de Barcelona.", True, ["Valencia"]),
    ("¿Cuánto cuesta el Plan Premium?", ["Cuánto", "Premium"], "Plan Básico. Plan Pro.", True, ["Premium"]),
    # a name the passage spells otherwise is the same name
    ("¿Cuándo se asociaron Tesla, Lane y Vale?", ["Vale"], "Tesla, Robert Lane y Benjamin Vail", True, []),
    # a code is never spelled otherwise, and a code the passage lacks is missing even if the tenant knows it
    ("¿Cuánto pesa el casco Kripto-102?", [], "Casco Kripto-101: 310 g.", True, ["Kripto-102"]),
    # a figure the question states qualifies it; roman numerals and decades are numbers
    ("¿Puedo pagar a plazos un pedido de 100 €?", ["100"], "En pedidos de más de 300 €", True, []),
    ("What happened in the 1970s and the XV century?", ["1970s", "XV"], "x", True, []),
    # ordinary words and inflected forms missing from the material are mostly paraphrases
    ("Should I worry about it?", ["worry"], "x", True, []),
    ("¿Qué propugnó Lutero?", ["propugnó"], "x", True, []),
    # a rare word (a tool, a brand) the tenant never uses is the point asked, in the question's own language
    ("What is the default timeout for httpx requests?", ["httpx"], "x", True, ["httpx"]),
    # across languages only names and codes count (a Spanish word is naturally absent from English text)
    ("¿Cuál es el tiempo de espera por defecto de httpx?", ["httpx"], "x", False, []),
    ("¿Cuánto pesa el Kripto-105?", ["Kripto-105"], "x", False, ["Kripto-105"]),
    # across languages a common name is translated ('Germany' is 'Alemania'): not missing
    ("Who was the last Prime Minister of East Germany?", ["Germany"], "Alemania del Este", False, []),
])
def test_missing_words(question, unknown, passage, same, missing):
    assert missing_words(question, "es" if "¿" in question else "en", unknown, passage, same) == missing


def test_names_are_capitalised_other_than_where_a_sentence_opens():
    assert name_like("Valencia", "¿Tenéis tienda en Valencia?", "es")
    assert not name_like("Tenéis", "¿Tenéis tienda en Valencia?", "es")
    assert not name_like("Isso", "O deflate faz um salto. Isso é bug?", "pt")
    assert name_like("APT", "How do I pin a package with APT?", "en")
    assert not name_like("OK", "Are egrep and fgrep still OK to use?", "en")
    assert name_like("compress()", "why does compress() fail?", "en")


def test_rare_means_uncommon_and_not_an_inflected_form():
    assert rare("zstd", "en") and rare("skateboards", "en") and rare("patinetes", "es")
    assert not rare("refresh", "en") and not rare("cerraría", "es")


@pytest.mark.parametrize("question, text, ok", [
    ("¿Cuánto cuesta el plan Pro?", "19,90 € al mes", True),
    ("¿Cuánto cuesta el plan Pro?", "durante 12 meses", False),
    ("¿Cuánto tarda un envío a Portugal?", "Portugal continental, 2 a 4 días laborables", True),
    ("¿Cuánto tarda un envío a Portugal?", "antes de las 14:00 salen el mismo día", False),
    ("How long is the warranty on the frame?", "an extended 5-year warranty", True),
    ("¿A qué hora abrís?", "de 10:00 a 20:00", True),
    ("¿Cuántos linajes de cloroplastos hay?", "pertenecen a uno de tres linajes", True),
])
def test_the_kind_of_figure_asked_for(question, text, ok):
    assert has_figure(*asked_kind(question), text) is ok


def test_how_much_faster_is_not_a_price_question():
    assert asked_kind("How much faster is man-db than man?")[0] == "figure"
    assert asked_kind("¿Qué es Lumen Care?") is None


def test_a_sentence_that_says_the_question_back_does_not_answer_it():
    assert restates("compress() keeps returning Z_BUF_ERROR. What should I check?", "compress() returns Z_BUF_ERROR.",
                    "en")
    assert not restates("Why does compress() return Z_BUF_ERROR?", "The output buffer was too small.", "en")


def test_shared_names_cross_languages_words_do_not():
    assert shares_name("When did Tesla partner with Lane?", "en", "Tesla se asoció en 1886 con Robert Lane")
    assert not shares_name("Do you offer a student discount? Call me at +34 612 345 678", "en",
                           "Tienda de Madrid: calle de Embajadores 112.")


@pytest.mark.parametrize("question, context, asked_there, asked", [
    ("¿El casco Runa-308 incluye visera?", "Casco Runa-308", "", ["incluye", "visera"]),
    ("¿La mochila Q40air es impermeable?", "Mochila Q40air", "", ["impermeable"]),
    ("Is libtasn1 thread-safe?", "libtasn1", "", ["thread-safe"]),
    # a question word: not a yes/no question; an action: asked_action judges it
    ("¿Qué garantía tiene el casco Runa-308?", "Casco Runa-308", "", []),
    ("¿Puedo recoger mi pedido en la tienda?", "Tiendas", "", []),
    # the thing itself and the names are not what is asked
    ("¿Tenéis tienda en Valencia?", "Tiendas y horarios", "", []),
    # an FAQ entry whose question line says most of it asks it otherwise
    ("Memcheck says 'still reachable'. Should I worry?", "Valgrind FAQ",
     "With Memcheck's memory leak detector, what's the difference between \"still reachable\" and lost?", []),
])
def test_the_property_a_yes_no_question_asks_about(question, context, asked_there, asked):
    lang = "en" if question[0].isalpha() else "es"
    assert asked_property(question, lang, context, asked_there) == asked
