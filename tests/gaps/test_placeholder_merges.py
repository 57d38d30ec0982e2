"""Placeholders are not words (#16 item 11): after masking, "Hola, soy <PERSON>, mi teléfono es <PHONE>"
made surfboards, skis, CPF and IBAN questions one gap. Merging rests on what a question asks."""
from __future__ import annotations

import pytest

from core.gaps.backlog import Backlog
from core.gaps.matching import comparable, has_content, words
from core.gaps.pii import mask

PREAMBLES = ["Hola, me llamo {n}, mi teléfono es {p} y mi correo {e}.", "Buenas, soy {n}, mi móvil es {p}, email {e}.",
             "Hola, soy {n} (DNI {d}), teléfono {p}."]
PEOPLE = [("Lucía Fernández", "+34 612 345 678", "lucia.f@gmail.com", "12345678Z"),
          ("Pedro Gómez", "+34 699 111 222", "pedro.g@correo.es", "87654321X"),
          ("Ana Ruiz", "+34 655 443 322", "ana.ruiz@mail.com", "11111111H")]
TOPICS = ["¿Vendéis tablas de surf?", "¿Tenéis esquís de travesía?", "¿Puedo pagar con mi CPF?",
          "¿Me devolvéis el dinero al IBAN ES91 2100 0418 4502 0005 1332?", "¿Hacéis envíos a Canarias?",
          "¿Cuánto cuesta la talla XL?", "¿Abrís los domingos?", "¿Tenéis neoprenos para niños?",
          "¿Reparáis bicicletas?", "¿Puedo cambiar la dirección de entrega?"]


@pytest.fixture
def backlog(rt):
    return Backlog(rt.store, rt.index.embedder)


@pytest.mark.parametrize("masked,expected", [
    # the clauses that carry a personal value, and greetings, are not what is asked
    ("Hola, me llamo <PERSON>, mi teléfono es <PHONE> y mi correo <EMAIL>. ¿Vendéis tablas de surf?",
     "Vendéis tablas de surf"),
    ("Me llamo <PERSON> y quiero saber cuánto tarda el envío a Canarias",
     "quiero saber cuánto tarda el envío a Canarias"),
    ("Buenas tardes, ¿abrís los domingos? Gracias", "abrís los domingos"),
    # when the personal value sits inside the question, only the placeholder goes
    ("¿Me devolvéis el dinero al IBAN <IBAN>?", "¿Me devolvéis el dinero al IBAN ?"),
    ("¿Por qué me cobrasteis dos veces en la tarjeta <CARD>?", "¿Por qué me cobrasteis dos veces en la tarjeta ?"),
    # nothing to drop: the question exactly as written (vectors of unmasked questions do not change)
    ("How do I top up my card?", "How do I top up my card?"),
    ("¿Cuánto tarda un envío a Canarias, y a Baleares?", "¿Cuánto tarda un envío a Canarias, y a Baleares?"),
    ("<EMAIL>", ""),
])
def test_comparable_text_is_what_the_question_asks(masked, expected):
    assert comparable(masked, "es") == expected


def test_a_question_of_personal_values_only_has_no_content_to_merge_on():
    assert not has_content(words(comparable("<EMAIL>", "es"), "es"), "<EMAIL>")
    assert has_content(words(comparable("¿Y?", "es"), "es"), "¿Y?")  # unmasked: matched as before


def test_unrelated_questions_behind_the_same_personal_preamble_stay_apart(backlog, ctx):
    gaps: dict[int, set[int]] = {}
    for i, question in enumerate(TOPICS * 3):
        name, phone, email, dni = PEOPLE[i % 3]
        text = PREAMBLES[(i // 3) % 3].format(n=name, p=phone, e=email, d=dni) + " " + question
        gap_id = backlog.record(ctx, text, "es", "web", f"c{i}")
        gaps.setdefault(gap_id, set()).add(i % len(TOPICS))
    assert sorted(len(topics) for topics in gaps.values()) == [1] * len(TOPICS)  # before: 15 gaps, up to 4 topics
    assert sorted(g.count for g in backlog.gaps(ctx)) == [3] * len(TOPICS)  # each asked by three people
    assert all("PERSON" not in g.label and "PHONE" not in g.label for g in backlog.gaps(ctx))


@pytest.mark.parametrize("first,second", [
    ("Hola, me llamo Lucía Fernández, mi teléfono es +34 612 345 678: ¿cuánto tarda un envío a Canarias?",
     "Buenas, soy Pedro Gómez, tel. 699 111 222, ¿cuánto tarda un envío a Canarias?"),
    ("¿Me devolvéis el dinero al IBAN ES91 2100 0418 4502 0005 1332?",
     "¿Me devolvéis el dinero al IBAN DE89 3704 0044 0532 0130 00?"),
    ("Hi, my name is Sarah Connor, my e-mail is sarah@sky.net. Do you ship to Canada?",
     "Hello, I'm Tom Baker (tom.baker@who.uk), do you ship to Canada?"),
])
def test_paraphrases_with_other_personal_values_still_merge(backlog, ctx, first, second):
    language = "en" if first.startswith("Hi") else "es"
    assert mask(first).entities and mask(second).entities
    assert backlog.record(ctx, first, language, "web", "a") == backlog.record(ctx, second, language, "web", "b")


def test_messages_of_personal_values_alone_open_gaps_of_their_own(backlog, ctx):
    one = backlog.record(ctx, "lucia.f@gmail.com", "es", "web", "a")
    two = backlog.record(ctx, "pedro.g@correo.es", "es", "web", "b")  # before: "<EMAIL>" == "<EMAIL>", one gap
    assert one != two
