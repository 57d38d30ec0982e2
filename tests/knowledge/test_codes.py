import pytest
from hypothesis import given, strategies as st

from core.knowledge import codes


@pytest.mark.parametrize("text, expected", [
    ("¿Cuánto pesa el casco Kripto-101?", ["Kripto-101"]),
    ("La lámpara SKU 4411-B", ["4411-B"]),
    ("la bici XR-7 y el avión A320neo", ["XR-7", "A320neo"]),
    ("planes LC-PRO y LC-BAS", ["LC-PRO", "LC-BAS"]),
    ("How heavy is the XR7?", ["XR7"]),
    ("Quanto custa o modelo Q25air?", ["Q25air"]),
    ("SKU 4411, Ref. 20931 y nº 1234", ["4411", "20931", "1234"]),
    ("Kripto-101-B no es el Kripto-101", ["Kripto-101-B", "Kripto-101"]),
    ("(USB-C) y COVID-19.", ["USB-C", "COVID-19"]),
])
def test_codes_are_found_as_written(text, expected):
    assert [c.text for c in codes.find(text)] == expected


@pytest.mark.parametrize("text", [
    "El plazo de devolución es de 30 días naturales.",      # ordinary words and numbers
    "En 2024 abrimos; desde 2025-01-01 el horario cambia.",  # years and dates
    "Cuesta 19,90 €, o 19.90EUR, o $25.",                    # prices
    "Llama al 910 555 123 o al +34-910-555-123.",            # phone numbers
    "Pesa 30kg, dura 24h, 100ml, 12V, del 5-8 de mayo, de 12-24h, a las 10h30.",  # quantities, ranges, times
    "1º, 2ª, 3rd, 30x40 cm, 2x1, tallas S-M y XS-XL, en 4K y 5G.",  # ordinals, sizes, dimensions, generic tags
    "Wi-Fi gratis, e-mail, T-shirt, check-in.",              # hyphenated words
    "Escríbenos a info@tienda24.es o visita www.kripto101.com.",  # addresses
    "El modelo 2024 y el código postal 28012.",              # a year after a label, a label not right before
    "DEVOLUCIONES GRATUITAS",                                # capitals without a hyphen
])
def test_ordinary_text_has_no_codes(text):
    assert codes.find(text) == []


@pytest.mark.parametrize("a, b", [("Kripto-101", "KRIPTO101"), ("4411-B", "4411b"), ("XR-7", "xr 7"),
                                  ("A320neo", "A320NEO")])
def test_spellings_of_one_code_share_its_key(a, b):
    assert codes.key(a) == codes.key(b)


@pytest.mark.parametrize("a, b", [("Kripto-101", "Kripto-102"), ("4411-A", "4411-B"), ("XR-7", "TX-7"),
                                  ("A320neo", "A320"), ("Kripto-101", "Kripto-101-B")])
def test_different_codes_have_different_keys(a, b):
    assert codes.key(a) != codes.key(b)


@pytest.mark.parametrize("text, carried", [
    ("El casco Kripto-101 pesa 312 g.", {"KRIPTO101"}),
    ("El casco kripto 101 pesa 312 g.", {"KRIPTO101"}),     # spelled with a blank
    ("El casco KRIPTO101 pesa 312 g.", {"KRIPTO101"}),
    ("El casco Kripto-1010 pesa 312 g.", set()),            # a prefix is not the code
    ("El casco Kripto-101-B pesa 312 g.", set()),           # nor a longer code
    ("Kripto, 101 unidades", set()),                        # punctuation between: not one code
])
def test_a_text_carries_a_code_by_key(text, carried):
    assert codes.carries(text, {"KRIPTO101", "XR7"}) == carried


def test_a_question_may_spell_a_code_the_material_names():
    assert codes.asked("¿cuánto pesa el casco kripto 101?", ["Casco Kripto-101", "Casco Kripto-102"]) == {
        "KRIPTO101": "Kripto-101"}
    assert codes.asked("¿cuánto pesa el casco kripto?", ["Casco Kripto-101"]) == {}
    assert codes.asked("¿Y el XR-7?", []) == {"XR7": "XR-7"}


def test_without_takes_codes_and_their_labels_out():
    assert codes.without("¿Cuánto pesa la lámpara SKU 4411-B?").split() == ["¿Cuánto", "pesa", "la", "lámpara", "?"]


def test_texts_about_other_codes_are_barred_only_when_one_carries_the_code():
    texts = {"a": "Casco Kripto-101: 312 g", "b": "Casco Kripto-102: 298 g", "c": "Envíos en 24 horas"}
    carried = {cid: codes.carries(t, {"KRIPTO101"}) for cid, t in texts.items()}
    assert codes.about_others(carried, texts) == {"b": ["Kripto-102"]}
    assert codes.about_others({"b": frozenset(), "c": frozenset()}, {k: texts[k] for k in "bc"}) == {}


@pytest.mark.parametrize("query, question, lang, same", [
    ("¿Qué peso tiene el casco Kripto-101?", "¿Cuánto pesa el casco Kripto-101?", "es", True),
    ("¿Cuánto pesa el casco Kripto-101?", "¿Cuánto pesa el casco Kripto-102?", "es", True),  # codes aside
    ("¿Cuánto pesa el casco Kripto-101?", "¿En qué tallas está disponible el casco Kripto-101?", "es", False),
    ("¿Cuánto dura la garantía de la lámpara SKU 8606-B?", "¿Cuánto pesa la lámpara SKU 8606-B?", "es", False),
    ("How much does the XR-7 weigh?", "How heavy is the XR-7?", "en", False),  # lexical: paraphrases may differ
])
def test_same_question_apart_from_codes(query, question, lang, same):
    assert codes.same_question(query, question, lang) is same


def test_the_words_naming_the_product_are_not_what_a_question_asks():
    query, pair = "¿Qué precio tiene la tienda de campaña QS-2?", "¿Cuánto pesa la tienda de campaña QS-2?"
    assert codes.same_question(query, pair, "es")  # half their words name the tent
    assert not codes.same_question(query, pair, "es", ["Tienda de campaña QS-2"])
    assert codes.same_question("¿Cuánto pesa la tienda QS-2?", pair, "es", ["Tienda de campaña QS-2"])


_stem = st.text(alphabet="ABCDEFGHKLMNPRSTVXZ", min_size=2, max_size=6).map(str.capitalize)


@given(_stem, st.integers(min_value=1, max_value=9999), st.sampled_from(["¿Cuánto pesa el {}?", "El {} cuesta 9 €.",
                                                                        "Quanto custa o {}?", "How heavy is the {}"]))
def test_a_word_number_code_is_found_in_any_sentence(stem, number, sentence):
    code = f"{stem}-{number}"
    found = codes.find(sentence.format(code))
    assert [c.text for c in found] == [code]
    assert codes.carries(sentence.format(code), {codes.key(code)}) == {codes.key(code)}


@given(st.integers(min_value=0, max_value=99_999), st.integers(min_value=0, max_value=99),
       st.sampled_from(["{a},{b} €", "{a}.{b} €", "€{a}", "{a} euros", "en {y}", "{a} {b} {a}", "+34 {a}-{b}",
                        "{a}-{b}", "{b}:{b} h", "{a} km", "{b}%"]))
def test_prices_years_phones_and_quantities_are_never_codes(a, b, form):
    assert codes.find(form.format(a=a, b=b, y=1900 + a % 200)) == []


@given(st.text(max_size=40))
def test_key_is_idempotent_and_find_never_fails(text):
    assert codes.key(codes.key(text)) == codes.key(text)
    for code in codes.find(text):
        assert text[code.start:code.start + len(code.text)] == code.text
