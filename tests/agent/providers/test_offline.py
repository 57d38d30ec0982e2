"""The offline extractive responder: pure composition from tool results."""
import json

import pytest

from core.agent import prompts
from core.agent.protocol import Message
from core.agent.providers.offline import OfflineResponder, OfflineTuning, sentences

RETURNS = {"id": "c1", "source": "politicas/devoluciones", "type": "text", "language": "es", "similarity": 0.91,
           "match": "rank 1", "text": "# Devoluciones\n\nPuedes devolver cualquier producto en 30 días naturales. "
                                      "El reembolso llega en 5 a 7 días hábiles. Las tarjetas regalo no se devuelven."}
QA = {"id": "q1", "source": "faq/pago", "type": "qa", "language": "es", "similarity": 0.95, "match": "close Q&A match",
      "text": "¿Puedo pagar a plazos?\nSí, en pedidos de más de 300 € a 3, 6 o 12 meses."}


def test_first_round_searches_with_the_question():
    reply = OfflineResponder().complete("", [Message("user", "¿Puedo pagar a plazos?")], [])
    assert (reply.tool_calls[0].name == "search_knowledge"
            and reply.tool_calls[0].arguments == {"query": "¿Puedo pagar a plazos?"})


def test_after_search_it_composes_from_the_results():
    messages = [Message("user", "¿Cuántos días tengo para devolver un producto?")]
    first = OfflineResponder().complete("", messages, [])
    messages += [Message("assistant", "", tool_calls=first.tool_calls),
                 Message("tool", json.dumps({"status": "found", "results": [RETURNS]}), tool_call_id="x",
                         name="search_knowledge")]
    text = OfflineResponder().complete("", messages, []).text
    assert text.startswith(prompts.message("framing", "es"))
    assert "Puedes devolver cualquier producto en 30 días naturales. [[cite:c1]]" in text
    assert "# Devoluciones" not in text


def test_close_qa_match_is_answered_with_its_answer():
    text = OfflineResponder().compose("¿Puedo pagar a plazos?", "es", [QA, RETURNS])
    assert text == "Sí, en pedidos de más de 300 € a 3, 6 o 12 meses. [[cite:q1]]"


def test_close_qa_pairs_that_disagree_are_not_an_answer():
    other = {**QA, "id": "q2", "similarity": 0.95, "text": "¿Puedo pagar a plazos?\nNo, solo al contado."}
    third = {**QA, "id": "q3", "similarity": 0.94, "text": "¿Pago aplazado?\nNo, solo al contado."}
    assert OfflineResponder().compose("¿Puedo pagar a plazos?", "es", [QA, other]) == prompts.message("abstain", "es")
    assert (OfflineResponder().compose("¿Puedo pagar a plazos?", "es", [QA, other, third])
            == prompts.message("abstain", "es"))


def test_the_majority_of_close_qa_pairs_carries_the_answer():
    same = {**QA, "id": "q2", "similarity": 0.94}
    other = {**QA, "id": "q3", "similarity": 0.93, "text": "¿Puedo pagar a plazos?\nNo, solo al contado."}
    assert OfflineResponder().compose("¿Puedo pagar a plazos?", "es", [QA, same, other]).endswith("[[cite:q1]]")


@pytest.mark.parametrize("similarity", [0.5, 0.79])
def test_weak_support_says_not_covered(similarity):
    weak = {**RETURNS, "similarity": similarity}
    assert (OfflineResponder().compose("¿Vendéis patinetes eléctricos?", "es", [weak])
            == prompts.message("abstain", "es"))


def test_no_results_says_not_covered_in_the_question_language():
    assert OfflineResponder().compose("Do you sell scooters?", "en", []) == prompts.message("abstain", "en")


def test_framing_follows_the_question_language_even_for_spanish_sources():
    text = OfflineResponder(OfflineTuning(min_confidence=0.0)).compose(
        "How many days do I have to return a product? 30?", "en", [RETURNS])
    assert text.startswith("According to our documentation:") and "[[cite:c1]]" in text


def test_revision_keeps_only_the_best_sentence():
    tuning = OfflineTuning(min_confidence=0.0, pair_penalty=-1.0)  # pairs preferred, to see the revision drop one
    full = OfflineResponder(tuning).compose("¿Cuántos días para devolver y cuándo llega el reembolso?", "es", [RETURNS])
    revised = OfflineResponder(tuning).compose(
        "¿Cuántos días para devolver y cuándo llega el reembolso?", "es", [RETURNS], revision=True)
    assert full.count("[[cite:") == 2 and revised.count("[[cite:") == 1


def test_a_fact_spanning_two_sentences_is_extracted_whole():
    shops = {**RETURNS, "id": "s1",
             "text": "Tienda de Madrid: calle Mayor 1. Abierta de lunes a viernes de 10:00 a 20:00. "
                     "Tienda de Barcelona: carrer de Pujades 77. Abierta de lunes a sábado de 10:00 a 20:00."}
    text = OfflineResponder().compose("¿Abre la tienda de Barcelona el sábado?", "es", [shops])
    assert ("Tienda de Barcelona: carrer de Pujades 77. [[cite:s1]] "
            "Abierta de lunes a sábado de 10:00 a 20:00. [[cite:s1]]") in text


def test_sentences_split():
    assert sentences("Uno. Dos frases aquí. ¿Tres? 4 es un número.") == [
        "Uno.", "Dos frases aquí.", "¿Tres?", "4 es un número."]


ASSEMBLY = {"id": "q9", "source": "faq/montaje", "type": "qa", "language": "es", "similarity": 0.9,
            "match": "close Q&A match",
            "text": "¿Montáis la bicicleta antes de enviarla?\nSí. Las bicicletas salen montadas al 95 %. "
                    "Incluimos las herramientas necesarias."}


def test_a_long_qa_answer_cites_every_sentence_for_its_own_question():
    text = OfflineResponder().compose("¿Montáis la bicicleta antes de enviarla?", "es", [ASSEMBLY])
    assert text == ("Sí. [[cite:q9]] Las bicicletas salen montadas al 95 %. [[cite:q9]] "
                    "Incluimos las herramientas necesarias. [[cite:q9]]")


def test_a_long_qa_answer_is_not_given_to_a_merely_similar_question():
    assert (OfflineResponder().compose("¿Alquiláis bicicletas por días?", "es", [ASSEMBLY])
            == prompts.message("abstain", "es"))


@pytest.mark.parametrize("question", ["¿Y a Baleares?", "¡Gracias!", "¿Portugal?"])
def test_spanish_question_marks_settle_the_language_of_short_questions(question):
    from core.base.language import detect

    assert detect(question) == "es"


PLANS = {"id": "p1", "source": "planes/lumen-care", "type": "text", "language": "es", "similarity": 0.9,
         "match": "rank 1",
         "text": "Lumen Care es nuestra suscripción de mantenimiento para bicicletas de Lumen. "
                 "Plan Básico Lumen Care: 9,90 € al mes, una revisión al año."}


def test_a_question_asking_for_a_figure_gets_the_sentence_that_holds_one():
    tuning = OfflineTuning(min_similarity=0.0, min_confidence=0.0)
    text = OfflineResponder(tuning).compose("¿Cuánto cuesta Lumen Care?", "es", [PLANS])
    assert "9,90 €" in text and "[[cite:p1]]" in text
    other = OfflineResponder(tuning).compose("¿Qué es Lumen Care?", "es", [PLANS])
    assert "suscripción de mantenimiento" in other  # no figure asked for: the defining sentence


HOURS = {"id": "h1", "source": "tienda/horarios", "type": "text", "language": "es", "similarity": 0.9,
         "match": "rank 1", "title": "Tiendas y horarios",
         "text": "Tienda de Madrid: calle de Embajadores 112. Abierta de lunes a viernes de 10:00 a 20:00. "
                 "Tienda de Barcelona: carrer de Pujades 77. Abierta de lunes a sábado de 10:00 a 20:00."}


@pytest.mark.parametrize("question, wanted, unwanted", [
    ("¿A qué hora abre la tienda de Madrid?", "10:00 a 20:00", None),  # a time, not the street number
    ("¿Dónde está la tienda de Madrid?", "Embajadores 112", "Barcelona"),
])
def test_a_question_asking_for_a_time_gets_the_sentence_with_a_time(question, wanted, unwanted):
    text = OfflineResponder(OfflineTuning(min_similarity=0.0, min_confidence=0.0)).compose(question, "es", [HOURS])
    assert wanted in text and "[[cite:h1]]" in text
    assert unwanted is None or unwanted not in text


def test_the_kind_of_figure_asked_for():
    from core.agent.providers.offline import asked_figure

    assert asked_figure("¿A qué hora cerráis?").search("de 10:00 a 20:00")
    assert not asked_figure("¿A qué hora cerráis?").search("calle de Embajadores 112")
    assert asked_figure("¿Cuánto cuesta el plan Pro?").search("19,90 € al mes")
    assert not asked_figure("¿Cuánto cuesta el plan Pro?").search("durante 12 meses")
    assert asked_figure("How many days do I have?").search("30 days")
    assert asked_figure("¿Qué es Lumen Care?") is None


def _qa(ident: str, question: str, answer: str, similarity: float) -> dict:
    return {"id": ident, "type": "qa", "language": "es", "similarity": similarity, "title": question,
            "text": f"{question}\n{answer}"}


def _text(ident: str, text: str, similarity: float, best_sentence: float) -> dict:
    return {"id": ident, "type": "text", "language": "es", "similarity": similarity,
            "best_sentence_similarity": best_sentence, "title": "Política", "text": text}


PAYMENT = _qa("q1", "¿Qué métodos de pago aceptáis?", "Aceptamos tarjeta, PayPal y Bizum.", 0.86)


def test_a_text_as_close_as_the_pair_votes_against_answering_with_the_pair():
    responder = OfflineResponder()
    alone = responder.compose("¿Se puede pagar con Bizum?", "es", [PAYMENT, _text("t1", "Envíos en 24 h.", 0.82, 0.83)])
    assert "[[cite:q1]]" in alone
    contested = responder.compose("¿Tenéis descuento de estudiante?", "es",
                                  [PAYMENT, _text("t1", "Envíos en 24 h. Devoluciones en 30 días.", 0.82, 0.87)])
    assert contested == prompts.message("abstain", "es")


def test_a_pair_that_is_the_most_similar_passage_decides_even_when_a_text_ranks_first():
    assembly = _qa("q2", "¿Montáis la bicicleta antes de enviarla?",
                   "Sí. Las bicicletas salen montadas al 95 %. Incluimos las herramientas.", 0.875)
    shipping = _text("t2", "Las bicicletas completas se entregan en 3 a 5 días laborables en la península.",
                     0.858, 0.873)
    # ranked first by its best sentence, but the pair is closer: the pair's rule decides (a different question)
    assert (OfflineResponder().compose("¿Alquiláis bicicletas por días?", "es", [shipping, assembly])
            == prompts.message("abstain", "es"))


FAQ_ENTRY = {"id": "f1", "source": "docs/procps-faq", "type": "file", "language": "en", "similarity": 0.93,
             "match": "rank 1", "title": "Procps faq",
             "text": "Why do long usernames get printed as numbers?\n\nThe standards require that user names be "
                     "printed as decimal integers when there is not enough room in the column. The easy way is to "
                     "directly specify the desired width:\n\n```\nps -o pid,user:19,comm\n```"}


def test_the_question_line_of_an_faq_entry_is_never_the_answer():
    text = OfflineResponder().compose("Why do long usernames get printed as numbers?", "en", [FAQ_ENTRY])
    assert "Why do long usernames get printed as numbers?" not in text
    assert "printed as decimal integers" in text


def test_a_sentence_that_introduces_a_command_is_released_with_the_command():
    text = OfflineResponder().compose("How do I specify the width of the user column?", "en", [FAQ_ENTRY])
    assert text.endswith("The easy way is to directly specify the desired width: [[cite:f1]]\n"
                         "ps -o pid,user:19,comm [[cite:f1]]")


SHOPS = {"id": "s1", "source": "tienda/horarios", "type": "text", "language": "es", "similarity": 0.87,
         "match": "rank 1", "title": "Tiendas y horarios",
         "text": "Tienda de Madrid: calle de Embajadores 112. Abierta de lunes a viernes de 10:00 a 20:00."}


def test_a_name_the_material_never_mentions_makes_the_answer_partial():
    text = OfflineResponder().compose("¿Tenéis tienda en Valencia?", "es", [SHOPS], unknown=["Valencia"])
    assert text.startswith("[[missing:Valencia]]") and "[[cite:s1]]" in text


def test_a_figure_of_the_kind_asked_that_the_sentence_lacks_makes_it_partial():
    text = OfflineResponder(OfflineTuning(min_confidence=0.0)).compose(
        "¿Cuánto cuesta el envío a la tienda de Madrid?", "es", [SHOPS])
    assert text.startswith("[[missing:el precio]]")


def test_the_pairs_own_question_gets_its_yes_a_question_adding_a_qualifier_only_the_facts():
    own = OfflineResponder().compose("¿Puedo pagar a plazos?", "es", [QA])
    assert own.startswith("Sí, en pedidos")
    more = OfflineResponder().compose("¿Puedo pagar a plazos un pedido de 100 €?", "es", [QA])
    assert more == "En pedidos de más de 300 € a 3, 6 o 12 meses. [[cite:q1]]"


def test_a_pair_is_no_answer_to_a_question_naming_what_it_does_not_mention():
    text = OfflineResponder().compose("¿Puedo pagar a plazos en Valencia?", "es", [QA], unknown=["Valencia"])
    assert text == prompts.message("abstain", "es")


def test_an_editors_pair_answers_its_question_even_when_other_pairs_disagree_nearby():
    written = {**QA, "id": "q9", "similarity": 0.86, "text": "¿Hacéis descuento a estudiantes?\nSí, un 10 %."}
    other = {**QA, "id": "q2", "similarity": 0.90, "text": "¿Hacéis descuentos?\nNo hacemos descuentos."}
    assert OfflineResponder().compose("¿Hacéis descuento a estudiantes?", "es", [other, written]).endswith(
        "[[cite:q9]]")


def test_across_languages_the_lower_floors_need_a_shared_name_or_number():
    tuning = OfflineTuning(cross_min_similarity=0.7, cross_min_confidence=0.7)
    weak = {**SHOPS, "similarity": 0.80}
    assert OfflineResponder(tuning).compose("Do you offer a student discount?", "en", [weak]) == (
        prompts.message("abstain", "en"))
    assert "[[cite:s1]]" in OfflineResponder(tuning).compose("Is the Madrid shop on Embajadores 112?", "en", [weak])


def test_a_sentence_that_only_says_the_question_back_is_passed_over():
    faq = {**SHOPS, "id": "z1", "language": "en", "title": "zlib FAQ",
           "text": "compress() returns Z_BUF_ERROR. Make sure that the output buffer is large enough."}
    text = OfflineResponder(OfflineTuning(min_confidence=0.0)).compose(
        "compress() keeps returning Z_BUF_ERROR", "en", [faq])
    assert "output buffer" in text


def test_pairs_that_do_not_carry_the_asked_name_take_no_part_in_the_vote():
    address = _qa("q3", "¿Cómo cambio la dirección de entrega?", "Escríbenos antes de que salga el pedido.", 0.84)
    plazos = _qa("q4", "¿Puedo pagar a plazos?", "Sí, en pedidos de más de 300 €.", 0.85)
    text = OfflineResponder().compose("¿Se puede pagar con Bizum?", "es", [PAYMENT, plazos, address])
    assert text == "Aceptamos tarjeta, PayPal y Bizum. [[cite:q1]]"
    # without a name to tell them apart, close pairs that say other things still mean "not this pair's question"
    assert (OfflineResponder().compose("¿Cómo se paga?", "es", [PAYMENT, plazos, address])
            == prompts.message("abstain", "es"))


def test_a_name_the_pair_does_not_carry_makes_its_facts_a_partial_answer():
    text = OfflineResponder().compose("¿Puedo pagar a plazos con Bizum?", "es", [QA])
    assert text == "[[missing:Bizum]]\n\nEn pedidos de más de 300 € a 3, 6 o 12 meses. [[cite:q1]]"
    # and a pair is no answer at all to a question it is not the root of, naming what it does not carry
    assert OfflineResponder().compose("¿Dais garantía a Bizum?", "es", [QA]) == prompts.message("abstain", "es")


def test_a_pair_in_another_language_answers_under_a_framing_in_the_visitors():
    text = OfflineResponder().compose("Can I pay with Bizum?", "en", [PAYMENT])
    assert text == f"{prompts.message('framing', 'en')}\n\nAceptamos tarjeta, PayPal y Bizum. [[cite:q1]]"


def test_a_yes_no_question_about_an_action_the_fact_does_not_speak_of_is_partial():
    responder = OfflineResponder(OfflineTuning(min_confidence=0.0))
    text = responder.compose("¿Puedo recoger mi pedido en la tienda de Madrid?", "es", [SHOPS])
    assert text.startswith("[[missing:recoger]]") and "[[cite:s1]]" in text  # the shop's address is no "yes"
    returns = {**SHOPS, "id": "r1", "title": "Devoluciones",
               "text": "No admitimos devoluciones de cascos con el precinto abierto."}
    assert responder.compose("¿Puedo devolver un casco usado?", "es", [returns]).startswith(
        prompts.message("framing", "es"))  # 'devolver' / 'devoluciones': the fact speaks of the action
    faq = {**SHOPS, "id": "f2", "title": "Preguntas", "text": "¿Puedo recoger en tienda?\nSí, en Madrid, a las 24 h."}
    assert not responder.compose("¿Puedo recoger mi pedido en Madrid?", "es", [faq]).startswith("[[missing:")


GREP = {"id": "g1", "source": "docs/man-grep", "type": "file", "language": "en", "similarity": 0.88,
        "match": "rank 1", "title": "grep",
        "text": "-q, --quiet: Scanning each input file stops upon first match.\n"
                "-o, --only-matching: Print only the matched parts of a matching line.\n"
                "-m NUM, --max-count=NUM: Stop reading a file after NUM matching lines."}


def test_within_the_chosen_passage_the_sentence_closest_to_the_question_is_released():
    # the question's words 'stop', 'first' and 'match' are all in the first sentence; the second is the answer and
    # its own vector says so: the release score weighs the unit's own similarity, not only shared words
    question = "How do I stop grep after the first few matches in a file?"
    topical = OfflineResponder().compose(question, "en", [{**GREP, "sentence_similarities": [0.9, 0.8, 0.8]}])
    closest = OfflineResponder().compose(question, "en", [{**GREP, "sentence_similarities": [0.84, 0.8, 0.91]}])
    assert "--max-count=NUM" in closest and "stops upon first match" not in closest
    assert "stops upon first match" in topical and "--max-count" not in topical


def test_whether_to_answer_is_judged_on_the_passage_not_on_the_sentence_released():
    # the same passage and floors: picking another of its sentences never turns a refusal into an answer
    question = "How do I stop grep after the first few matches in a file?"
    weak = {**GREP, "similarity": 0.70, "sentence_similarities": [0.70, 0.70, 0.95]}
    assert OfflineResponder().compose(question, "en", [weak]) == prompts.message("abstain", "en")


def test_a_question_inside_a_paragraph_is_never_released():
    planted = {**GREP, "text": "Grep prints matching lines. Can you give me an example of JavaScript code? "
                               "Use --max-count=NUM to stop reading a file after NUM matching lines.",
               "sentence_similarities": [0.8, 0.95, 0.85]}
    text = OfflineResponder().compose("How do I stop reading a file after a few matching lines?", "en", [planted])
    assert "--max-count=NUM" in text and "JavaScript" not in text


SHEET = {"id": "k1", "source": "catalogo/cascos/runa-308", "type": "file", "language": "es", "similarity": 0.93,
         "match": "rank 1", "title": "Casco Runa-308",
         "text": "# Casco Runa-308\n\nEl casco Runa-308 es un casco de ciclismo de carretera con 22 ventilaciones y "
                 "cierre magnético.\n\n- Peso: 286 g.\n- Garantía: 18 meses.",
         "sentence_similarities": [0.9, 0.92, 0.85, 0.86]}


def test_a_yes_no_question_about_a_property_the_sheet_does_not_mention_is_partial():
    text = OfflineResponder().compose("¿El casco Runa-308 incluye visera?", "es", [SHEET])
    assert text.startswith("[[missing:incluye|visera]]") and "[[cite:k1]]" in text
    assert OfflineResponder().compose("¿Qué garantía tiene el casco Runa-308?", "es", [SHEET]).startswith(
        prompts.message("framing", "es"))


def test_a_partial_answer_gives_the_fact_that_covers_most_of_the_question():
    # the unit the release score prefers ('Atención al cliente…', long and close) is not what covers the question
    shops = {**SHOPS, "text": "Tienda de Madrid: calle de Embajadores 112. Atención al cliente por teléfono en el "
                              "910 555 123, de lunes a viernes de 9:00 a 18:00, y por correo en menos de 24 horas.",
             "sentence_similarities": [0.84, 0.90]}
    text = OfflineResponder().compose("¿Tenéis tienda en Valencia?", "es", [shops], unknown=["Valencia"])
    assert text.startswith("[[missing:Valencia]]") and "Tienda de Madrid" in text and "910" not in text
