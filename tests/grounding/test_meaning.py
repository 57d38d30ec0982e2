"""The gate judges support on meaning (some framing set aside, related words, dated life spans) and, given the
question, whether an answer addresses it (strict relevance, conservative)."""
import json

import pytest

from core.agent.loop import Agent
from core.grounding.framing import stated
from core.grounding.gate import Evidence, check
from core.grounding.numbers import numbers
from core.grounding.relevance import asked_names, unaddressed
from core.knowledge import sources
from tests.fakes import ScriptedProvider

FACTS = ("ESPN won an emmy for the creation of the superimposed yellow line representing the first down line. "
         "The New Zealand basketball team are nicknamed the Tall Blacks. "
         "American football evolved in the United States from rugby football. "
         "Elvis Aaron Presley (January 8, 1935 – August 16, 1977) was an American singer. "
         "Competitive routines range anywhere from one to three minutes. "
         "In 1916 Georgia Tech defeated Cumberland 222 - 0.")
STORES = "Tienda de Madrid: calle de Embajadores 112. Abre de 10:00 a 20:00."


def ok(answer: str, text: str = FACTS, **kw) -> bool:
    return check(answer, Evidence({"k1": text}), **kw).ok


def verdicts(answer: str, text: str = FACTS, **kw) -> list[str]:
    return [c.verdict for c in check(answer, Evidence({"k1": text}), **kw).claims]


# ---------------------------------------------------------------- framing
@pytest.mark.parametrize("claim, core, asked", [
    ("Did you know that ESPN won an Emmy?", "ESPN won an Emmy", True),
    ("True Did you know Jackson had a patent?", "Jackson had a patent", True),
    ("Do you know why the dunk was banned?", "the dunk was banned", True),
    ("Have you heard that Harley Quinn has a new series?", "Harley Quinn has a new series", True),
    ("¿Sabías que puedes devolverlo en 30 días?", "puedes devolverlo en 30 días", True),
    ("Do you know what the highest court is?", "Do you know what the highest court is?", False),
    ("Have you heard of the game?", "Have you heard of the game?", False),
    ("Do you read science fiction?", "Do you read science fiction?", False),  # a question, no fact
    ("I'm not sure, but they were located in Italy.", "they were located in Italy.", False),
    ("Of course, i know Central Park is a park", "Central Park is a park", False),
    ("I've heard that cats sleep a lot, and everything.", "cats sleep a lot.", False),
    # kept as written: a negative answer, doubt and opinion, agreement
    ("No, it is not free.", "No, it is not free.", False),
    ("I think he played for the Patriots.", "I think he played for the Patriots.", False),
    ("I'm not sure where they played.", "I'm not sure where they played.", False),
    ("I agree with you. He played in Boston.", "I agree with you. He played in Boston.", False),
    ("Nobody knows.", "Nobody knows.", False),
])
def test_framing_is_set_aside(claim, core, asked):
    assert stated(claim) == (core, asked)


def test_a_fact_asked_as_a_question_is_checked_both_ways():
    assert ok("Hey there! Did you know that ESPN won an Emmy for the superimposed yellow line? [[cite:k1]]")
    assert verdicts("Did you know that ESPN won an Oscar for the red line? [[cite:k1]]") == ["weak_support"]
    assert not ok("Do you like football? [[cite:k1]]")  # a lone question states no fact


def test_framing_that_leaves_next_to_nothing_is_judged_as_written():
    assert verdicts("Did you know that ESPN [[cite:k1]]") == ["weak_support"]  # a cut-off turn
    assert verdicts("I know that ESPN won an Emmy. [[cite:k1]]") == ["supported"]


def test_a_vouching_hedge_is_set_aside_but_doubt_and_reactions_are_claims():
    assert ok("I'm not sure, but Georgia Tech defeated Cumberland 222 - 0 in 1916. [[cite:k1]]")
    assert ok("I know that Georgia Tech defeated Cumberland 222 - 0 in 1916. [[cite:k1]]")
    assert not ok("I think Georgia Tech defeated Cumberland 222 - 0 in 1916. [[cite:k1]]")  # the speaker's view
    assert verdicts("That is wild! [[cite:k1]] They are nicknamed the Tall Blacks. [[cite:k1]]") == [
        "weak_support", "supported"]
    assert verdicts("No, they are nicknamed the Tall Blacks. [[cite:k1]]") == ["weak_support"]  # negative answer


def test_the_speaker_is_no_fact_of_the_source():
    assert verdicts("I'm from New Zealand and the team are nicknamed the Tall Blacks. [[cite:k1]]") == [
        "weak_support"]
    assert verdicts("Yes, I do. [[cite:k1]]") == ["weak_support"]
    assert verdicts("Yes. [[cite:k1]]") == ["supported"]  # a bare answer still is


# ---------------------------------------------------------------- related words, numbers and names stay strict
@pytest.mark.parametrize("answer, text", [
    ("They are called the Tall Blacks. [[cite:k1]]", FACTS),  # nicknamed
    ("Georgia Tech beat Cumberland 222 - 0. [[cite:k1]]", FACTS),  # defeated
    ("American football evolved in the US from rugby football. [[cite:k1]]", FACTS),  # United States
    ("Elvis Presley was born in 1935. [[cite:k1]]", FACTS),  # a life span in parentheses
    ("He died in 1977. [[cite:k1]]", FACTS),
    ("Competitive routines range from 1 to 3 minutes. [[cite:k1]]", FACTS),  # 'one to three'
    ("The band is called Nirvana. [[cite:k1]]", "The band is known as Nirvana."),
    ("Mario and Zelda are a kind of video game. [[cite:k1]]", "Mario and Zelda are video games."),  # vague word
])
def test_faithful_paraphrases_pass(answer, text):
    assert ok(answer, text)


@pytest.mark.parametrize("answer, text", [
    ("Competitive routines range from 2 to 3 minutes. [[cite:k1]]", FACTS),
    ("Georgia Tech beat Cumberland 220 - 0. [[cite:k1]]", FACTS),
    ("Elvis Presley was born in 1936. [[cite:k1]]", FACTS),
    ("Elvis Presley was born an American singer. [[cite:k1]]", FACTS),  # a life span says 'born' with its date
    ("They are called the Tall Whites. [[cite:k1]]", FACTS),
    ("American football evolved in the UK from rugby football. [[cite:k1]]", FACTS),
    ("It began in the UK. [[cite:k1]]", "It began in Britain."),  # an expansion, not a looser name
    ("In 1916 Large won the match. [[cite:k1]]", "In 1916 Big won the match."),  # a name has no synonyms
    ("The Kingsmen wrote the song. [[cite:k1]]", "Louie Louie is a song written by Richard Berry and best "
     "known for the hit version by The Kingsmen."),  # no verb forms: 'wrote' is not 'written'
    ("The show was made by HBO. [[cite:k1]]", "The show aired on HBO."),  # a general verb is a claim word
])
def test_numbers_and_names_stay_strict(answer, text):
    assert not ok(answer, text)


def test_a_decade_is_read_as_its_years():
    source = "In the late 1970s the new wave got going."
    assert ok("In the late 70's the new wave got going. [[cite:k1]]", source)
    assert not ok("In the late 80's the new wave got going. [[cite:k1]]", source)


def test_one_is_a_number_only_in_a_range():
    assert [n.surface for n in numbers("from one to three minutes", "en", source=True)] == ["one", "three"]
    assert numbers("one of the best", "en", source=True) == []


# ---------------------------------------------------------------- relevance
def test_asked_names():
    assert asked_names("¿Tenéis tienda en Valencia?") == (("valencia",),)
    assert asked_names("¿Cuánto cuesta el Plan Premium de Lumen Care?") == (("premium",), ("lumen", "care"))
    assert asked_names("¿Cuánto pesa el casco Kripto-101?") == (("kripto-101",),)
    assert asked_names("How long do I have to return a bike?") == ()
    assert asked_names("¿Quién reinó en el siglo XV?") == ()


def test_unaddressed_names():
    assert unaddressed([("valencia",)], [STORES]) == ["valencia"]
    assert unaddressed([("bendigo",)], ["Ballarat, Bedigo y Geelong"]) == []  # one letter apart
    assert unaddressed([("atlantico",)], ["su transmisión transatlántica"]) == []
    assert unaddressed([("martin", "lutero")], ["la versión de Lutero"]) == []
    assert unaddressed([("tesla",), ("nobel",)], ["Tesla recibió una propuesta"]) == []  # one of several


def test_a_supported_claim_about_something_else_is_no_answer():
    answer = "Tienda de Madrid: calle de Embajadores 112. [[cite:k1]]"
    verdict = check(answer, Evidence({"k1": STORES}), question="¿Tenéis tienda en Valencia?")
    assert not verdict.ok and [c.verdict for c in verdict.claims] == ["off_question"]
    assert "valencia" in verdict.claims[0].detail and "[[missing:" in verdict.feedback()
    assert check(answer, Evidence({"k1": STORES})).ok  # no question: the old behaviour
    assert check(answer, Evidence({"k1": STORES}), question="¿Dónde está la tienda de Madrid?").ok
    assert check(answer, Evidence({"k1": STORES}), question="¿A qué hora abrís?").ok  # no names: not judged


def test_relevance_is_not_judged_across_languages():
    answer = "Esta parte temprana de la carrera de Lutero fue muy productiva. [[cite:k1]]"
    text = "Esta parte temprana de la carrera de Lutero fue muy productiva."
    assert check(answer, Evidence({"k1": text}), question="What part of Luther's career was productive?").ok


def test_one_addressing_claim_is_enough():
    answer = "La tienda de Madrid abre a las 10:00. [[cite:k1]] Está en la calle de Embajadores 112. [[cite:k1]]"
    assert check(answer, Evidence({"k1": STORES}), question="¿A qué hora abre la tienda de Madrid?").ok


# ---------------------------------------------------------------- the loop passes the question
def _store_id(messages):
    for message in reversed(messages):
        if message.role == "tool":
            for item in json.loads(message.content).get("results", []):
                return item["id"]
    raise AssertionError("no search result")


def test_an_off_question_answer_gets_one_revision_then_is_withheld(ctx, rt):
    sources.save(ctx, rt.store, "tiendas/madrid", title="Tiendas", content=STORES, language="es")
    rt.index.train(ctx)
    off = lambda messages: f"Tienda de Madrid: calle de Embajadores 112. [[cite:{_store_id(messages)}]]"  # noqa: E731
    bot = Agent(rt, ScriptedProvider(("search_knowledge", {"query": "tienda Valencia"}), off, off))
    result = rt.turns.run(ctx, bot, "¿Tenéis tienda en Valencia?")
    assert result.status != "answered" and "Embajadores" not in result.answer
    assert [g["ok"] for g in result.trace.gate] == [False, False]
    assert result.trace.gate[0]["claims"][0]["verdict"] == "off_question"
    revision = bot.provider.calls[-1]["messages"][-1]
    assert "do not answer the question" in revision.content


def test_a_partial_answer_gives_the_closest_fact_without_the_relevance_test(ctx, rt):
    sources.save(ctx, rt.store, "tiendas/madrid", title="Tiendas", content=STORES, language="es")
    rt.index.train(ctx)
    partial = lambda m: (  # noqa: E731
        f"[[missing: Valencia]] Tienda de Madrid: calle de Embajadores 112. [[cite:{_store_id(m)}]]")
    bot = Agent(rt, ScriptedProvider(("search_knowledge", {"query": "tienda Valencia"}), partial))
    result = rt.turns.run(ctx, bot, "¿Tenéis tienda en Valencia?")
    assert result.trace.gate[0]["ok"] and "Embajadores" in result.answer


def test_a_figure_the_question_states_is_not_a_name_it_must_address():
    from core.grounding.relevance import asked_names

    assert asked_names("could a hotel be booked for me for the 10th to the 15th at 5pm") == ()
    assert asked_names("¿Cuánto pesa el casco Kripto-101?") == (("kripto-101",),)


def test_a_code_glued_to_digits_is_not_cut_into_a_name():
    """'Q25neo' is one code: its letters after the digits are not a name the sentence must carry apart."""
    from core.grounding.support import support_score

    source = "El casco Q25neo pesa 310 g y tiene 2 años de garantía."
    assert support_score("El casco Q25neo pesa 310 g.", source, "es") >= 0.9
