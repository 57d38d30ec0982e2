"""PII masking of stored sample questions (core.pii): table-driven per entity and language, offline."""
import logging
import socket
import threading

import pytest

from core.gaps import pii
from core.gaps.pii import Masked, MaskingError, mask

POSITIVES = [  # (text, raw value that must disappear, entity kind)
    # e-mail
    ("Mi correo es juan.perez@gmail.com, gracias", "juan.perez@gmail.com", "EMAIL"),
    ("Escrevam para maria+loja@empresa.com.br por favor", "maria+loja@empresa.com.br", "EMAIL"),
    ("Contact me at JOHN_DOE@Example.CO.UK asap", "JOHN_DOE@Example.CO.UK", "EMAIL"),
    # phones: ES
    ("Llamadme al +34 612 345 678 por la tarde", "+34 612 345 678", "PHONE"),
    ("Mi móvil es 612345678", "612345678", "PHONE"),
    ("El fijo de la tienda es 91 123 45 67", "91 123 45 67", "PHONE"),
    # PT
    ("O meu telemóvel é +351 912 345 678", "+351 912 345 678", "PHONE"),
    ("Liguem para 912 345 678 amanhã", "912 345 678", "PHONE"),
    # BR
    ("Meu celular é (11) 91234-5678", "(11) 91234-5678", "PHONE"),
    ("WhatsApp +55 11 91234-5678", "+55 11 91234-5678", "PHONE"),
    # US / UK
    ("Call me on (415) 555-2671 tomorrow", "(415) 555-2671", "PHONE"),
    ("My number is +1 415 555 2671", "+1 415 555 2671", "PHONE"),
    ("Ring me on +44 20 7946 0958", "+44 20 7946 0958", "PHONE"),
    ("My mobile: 07700 900123", "07700 900123", "PHONE"),
    # other national formats and extensions
    ("stop texting 001-518-640-0854x12345", "001-518-640-0854x12345", "PHONE"),
    ("Rufen Sie 0221/1234567 an", "0221/1234567", "PHONE"),
    ("il mio cellulare 333 1234567", "333 1234567", "PHONE"),
    ("appelez le 0430830401", "0430830401", "PHONE"),
    ("ring +46 (0)8 928 571 38", "+46 (0)8 928 571 38", "PHONE"),
    ("Kundenservice 1-700-278-752 gratis", "1-700-278-752", "PHONE"),  # dash groups are no thousands
    ("Szám: 77/079 2787", "77/079 2787", "PHONE"),  # area/subscriber, unlike 2024/123456
    # bare digit runs (no shape) after a phone cue, a call-type verb, or before a label
    ("My phone number is 80027874", "80027874", "PHONE"),
    ("Tel. 25 01 90 (Luxembourg)", "25 01 90", "PHONE"),
    ("Please call 13812345678 tomorrow", "13812345678", "PHONE"),
    ("You can reach him at 2006201.", "2006201", "PHONE"),
    ("I would like to stop receiving messages to 018007191890", "018007191890", "PHONE"),
    ("Contact: 80027874, thanks", "80027874", "PHONE"),
    ("Llama al 80027874 por la tarde", "80027874", "PHONE"),
    ("Kaevu 94, Nicosia\n80027874 mobile\n", "80027874", "PHONE"),
    ("80027874 is my number", "80027874", "PHONE"),
    # a bare run of 8-15 digits with no cue: a phone or account number all the same
    ("I wrote down 13812345678 yesterday", "13812345678", "ID"),
    ("Ask Maria about 80027874 please", "80027874", "ID"),
    ("¿Podéis llamarme? 612345678", "612345678", "PHONE"),
    # cards (Luhn-valid)
    ("Pagué con la tarjeta 4111 1111 1111 1111 y falló", "4111 1111 1111 1111", "CARD"),
    ("Card 5500-0000-0000-0004 was charged twice", "5500-0000-0000-0004", "CARD"),
    ("Amex 3782 822463 10005 rejected", "3782 822463 10005", "CARD"),
    ("cartão 4111111111111111 recusado", "4111111111111111", "CARD"),
    # IBAN, with and without spaces, any case
    ("Mi IBAN es ES91 2100 0418 4502 0005 1332", "ES91 2100 0418 4502 0005 1332", "IBAN"),
    ("Transferid a ES9121000418450200051332", "ES9121000418450200051332", "IBAN"),
    ("iban es91 2100 0418 4502 0005 1332 por favor", "es91 2100 0418 4502 0005 1332", "IBAN"),
    ("O meu IBAN: PT50 0002 0123 1234 5678 9015 4", "PT50 0002 0123 1234 5678 9015 4", "IBAN"),
    ("IBAN PT50000201231234567890154", "PT50000201231234567890154", "IBAN"),
    ("Konto DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00", "IBAN"),
    ("refund to DE89370400440532013000", "DE89370400440532013000", "IBAN"),
    # national ids
    ("Mi DNI: 12345678Z", "12345678Z", "ID"),
    ("con NIF 12.345.678-Z", "12.345.678-Z", "ID"),
    ("Tengo NIE X1234567L", "X1234567L", "ID"),
    ("meu CPF é 123.456.789-09", "123.456.789-09", "ID"),
    ("CPF 12345678909", "12345678909", "ID"),
    ("CNPJ da empresa 11.222.333/0001-81", "11.222.333/0001-81", "ID"),
    ("CNPJ 11222333000181", "11222333000181", "ID"),
    ("SSN 536-22-8145", "536-22-8145", "ID"),
    ("mi número de pasaporte es PAA123456", "PAA123456", "ID"),
    # URLs with personal tokens, IPs
    ("El enlace https://tienda.es/reset?token=abc123def456 no va", "https://tienda.es/reset?token=abc123def456", "URL"),
    ("open https://app.example.com/u/8f3a9c2e4b1d4e6f9a7b/settings", "8f3a9c2e4b1d4e6f9a7b", "URL"),
    ("see http://example.com/unsubscribe/juan@gmail.com", "juan@gmail.com", "URL"),
    ("My IP is 192.168.1.23", "192.168.1.23", "IP"),
    ("from 2001:db8::1 today", "2001:db8::1", "IP"),
    # names via introductions, sign-offs, titles, labels
    ("Hola, me llamo Lucía Fernández y no me llega el pedido", "Lucía Fernández", "PERSON"),
    ("Buenas, mi nombre es María José García, tengo una duda", "María José García", "PERSON"),
    ("Soy Juan Pérez y quiero devolver unas zapatillas", "Juan Pérez", "PERSON"),
    ("Olá, meu nome é João da Silva e preciso de ajuda", "João da Silva", "PERSON"),
    ("Boa tarde, me chamo Ana Beatriz, o pedido atrasou", "Ana Beatriz", "PERSON"),
    ("Hi, my name is Sarah Connor and my order is late", "Sarah Connor", "PERSON"),
    ("Hi, I'm Tom and I can't log in", "Tom", "PERSON"),
    ("Hello, this is Emily Watson from accounting.", "Emily Watson", "PERSON"),
    ("¿Dónde está mi pedido?\nSaludos,\nCarmen Ruiz", "Carmen Ruiz", "PERSON"),
    ("Where is my refund? Thanks, Peter", "Peter", "PERSON"),
    ("Hablé con la Sra. Gutiérrez ayer", "Gutiérrez", "PERSON"),
    ("Nombre: Pedro Almodóvar Caballero", "Pedro Almodóvar Caballero", "PERSON"),
    # #16: a name written in lowercase after a first-person cue
    ("hola me llamo lucas martín", "lucas martín", "PERSON"),
    ("hola me llamo lucas martín y no me llega el pedido", "lucas martín", "PERSON"),
    ("buenas, mi nombre es carmen de la fuente, ¿hacéis envíos?", "carmen de la fuente", "PERSON"),
    ("oi, eu me chamo joão da silva e quero trocar o tênis", "joão da silva", "PERSON"),
    ("olá, meu nome é ana beatriz, o pedido atrasou", "ana beatriz", "PERSON"),
    ("hi, my name is john smith and my order is late", "john smith", "PERSON"),
    ("my name's emily, can I change my plan?", "emily", "PERSON"),
    # #17 review: a Spanish or Portuguese self-introduction with the article before the name
    ("Sou a Maria Santos, o meu telemóvel é o mesmo", "Maria Santos", "PERSON"),
    ("Olá, eu sou o João Silva e quero trocar a bicicleta", "João Silva", "PERSON"),
    ("Soy la María López, ¿cuánto cuesta el envío?", "María López", "PERSON"),
    # #16: a token URL on a domain presidio's list does not know, with and without a scheme
    ("https://shop.example/reset?token=a8f3kd93ls0qp2", "a8f3kd93ls0qp2", "URL"),
    ("El enlace https://shop.example/reset?token=a8f3kd93ls0qp2 no funciona.", "a8f3kd93ls0qp2", "URL"),
    ("O link shop.example/verify/a8f3kd93ls0qp2 expirou", "a8f3kd93ls0qp2", "URL"),
    ("the link www.shop.example/confirm?user=8841 is broken", "user=8841", "URL"),
    # #16: e-mails written out to dodge filters
    ("pedro [at] correo [dot] com", "pedro [at] correo [dot] com", "EMAIL"),
    ("escribidme a pedro(at)correo.com por favor", "pedro(at)correo.com", "EMAIL"),
    ("mi correo es pedro arroba correo punto com", "pedro arroba correo punto com", "EMAIL"),
    ("meu e-mail: maria arroba empresa ponto com ponto br", "maria arroba empresa ponto com ponto br", "EMAIL"),
    ("email me: john {at} example {dot} co {dot} uk", "john {at} example {dot} co {dot} uk", "EMAIL"),
    ("write to john at example dot com", "john at example dot com", "EMAIL"),
]


@pytest.mark.parametrize("text,raw,kind", POSITIVES, ids=[f"{k}-{i}" for i, (_, _, k) in enumerate(POSITIVES)])
def test_personal_values_are_masked(text, raw, kind):
    out = mask(text)
    assert raw not in out.text
    assert kind in out.entities
    assert pii.PLACEHOLDER_OF[kind] in out.text
    assert len(out.entities) == sum(out.text.count(p) for p in pii.PLACEHOLDER_OF.values())


NEGATIVES = [  # ordinary questions (numbers, prices, dates, postcodes, quantities) and near-misses: unchanged
    "¿Cuánto cuesta el envío? Me cobraron 30 € y el pedido tardó 3 días.",
    "¿Puedo devolver 2 pares de zapatillas compradas el 12/05/2024?",
    "El envío a 28013 Madrid cuesta 4,95 € o es gratis desde 50 €?",
    "Pedí 3 unidades del modelo X200 y solo llegaron 2",
    "¿Tenéis la talla 42 en stock? El precio era 1.299,99 €",
    "El horario es de 9.00-14.00 y de 16:00 a 20:00",
    "¿Ofrecéis financiación de 1 500 000 pesos a 24 meses?",
    "Mi pedido número 1234567890123456 no ha llegado",  # 16 digits, fails Luhn: not a card
    "Mi pedido 12345678 no llega y la factura 20240001234 tampoco",  # named order and invoice numbers
    "order no. 123456789 and ref 0000123456",
    "Me cobraron 12345678 € por error",  # an amount
    "¿Puedo transferir 1000000 de una vez? ¿Y 25000000?",  # round numbers are quantities
    "My order 4111 1111 1111 1112 is late",  # grouped like a card, fails Luhn
    "Tengo el 12345678A pero no sé si es correcto",  # DNI shape, wrong control letter
    "La referencia X1234567A no aparece",  # NIE shape, wrong control letter
    "Referência 11.222.333/0001-00",  # CNPJ shape, wrong check digits
    "Transferi para ES91 2100 0418 4502 0005 1333",  # wrong IBAN checksum
    "Soy cliente desde 2019 y quiero cambiar de plan",
    "Soy autónomo, ¿puedo pedir factura con IVA del 21 %?",
    "Soy el responsable de compras, ¿hacéis factura?",  # an article before a role, not a name
    "Sou o cliente que ligou ontem",
    "I am a Premium member and cannot log in",  # English "a" is no article before a name
    "Hola, buenas tardes. ¿Hacéis envíos a Canarias?",
    "Quero devolver um produto comprado em 05/03/2024 por R$ 199,90",
    "O CEP 01310-100 tem entrega em 2 dias úteis?",
    "Entregam em Lisboa, código postal 1000-001?",
    "Olá, sou cliente há 5 anos e quero cancelar",
    "I ordered 3 items for $45.99 on 2024-03-12 and only got 2",
    "Is shipping to ZIP 94103 free over $50?",
    "Can I pay in 3, 6 or 12 months?",
    "I'm unable to log in since version 2.3.1",
    "I am not able to reset my password",
    "I'm Spanish, do you ship to Spain?",
    "Why won't it go through, this is URGENT, please help",
    "Thanks! Where can I find the invoice?",
    "The package weighs 2.5 kg and measures 30 x 40 x 50 cm",
    "See https://example.com/help and www.tienda.es/envios for details",  # plain URLs are kept
    "I paid 1,299.00 USD for 2 licences",
    "Pedido 2024/123456 y referencia 0000123456",  # order-like numbers
    "Añade 1/2 kg más, la oferta 2019-2020 acabó",
    "Somos 29 000-24 000 clientes",
    "Contact: 12/05/2024 at 09:30, order 2024/123456",  # a cue word before a date or an order number
    "We sold 1234567 office chairs, call 2 times if needed",
    "It reached 1 500 000 users, call us on 15/06/2024",
    "La escala 1/100 000 y la página 12/345 678",
    # near-misses of the #16 rules: no name after the cue, an "at" that is no e-mail, plain links
    "my name is wrong on the invoice",
    "My name is spelled wrong in my account, can you fix it?",
    "mi nombre es incorrecto en la factura",
    "Mi nombre es demasiado largo para el formulario",
    "meu nome está errado no pedido",
    "o meu nome é inválido no cadastro?",
    "¿Cómo se llama el producto que sale en la portada?",
    "I bought it at amazon.com last week and it broke",
    "We arrive at the store at 5pm, is it open?",
    "La caja pesa una arroba de trigo",
    "Lo compré en www.tienda.es/ofertas y llegó roto",
    "See shop.example/help/returns for the return policy",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_questions_come_back_unchanged(text):
    assert mask(text) == Masked(text, ())


def test_invalid_cpf_is_not_an_id():
    assert "ID" not in mask("O código 123.456.789-00?").entities


@pytest.mark.parametrize("text,raw", [("Mi DNI es 12345678A", "12345678A"), ("NIE X1234567A", "X1234567A"),
                                      ("CPF 123.456.789-00", "123.456.789-00")])
def test_after_an_id_keyword_even_a_mistyped_id_is_masked(text, raw):
    out = mask(text)
    assert raw not in out.text and out.entities == ("ID",)


def test_entities_follow_text_order_and_carry_no_values():
    out = mask("Soy Ana López, mi email ana@x.es, tel. 612 345 678, DNI 12345678Z.")
    assert out.text == "Soy <PERSON>, mi email <EMAIL>, tel. <PHONE>, DNI <ID>."
    assert out.entities == ("PERSON", "EMAIL", "PHONE", "ID")


def test_a_name_introduced_once_is_masked_everywhere():
    out = mask("Me llamo Lucía Fernández. Lucía necesita el pedido, dice Fernández.")
    assert "Lucía" not in out.text and "Fernández" not in out.text


def test_overlapping_findings_leave_nothing_behind():
    out = mask("escribe a https://tienda.es/u/ana.lopez@gmail.com?ref=8f3a9c2e4b1d")
    assert "ana.lopez" not in out.text and "gmail" not in out.text and "8f3a9c2e4b1d" not in out.text


def test_masked_output_never_contains_a_raw_value():
    raws = [raw for _, raw, _ in POSITIVES]
    text = "\n".join(text for text, _, _ in POSITIVES)
    masked = mask(text).text
    assert [raw for raw in raws if raw in masked] == []


def test_fails_closed_when_the_anonymizer_breaks(monkeypatch):
    secret = "Me llamo Lucía Fernández, DNI 12345678Z"

    def boom(text, *args, **kwargs):
        raise ValueError(f"cannot handle {text}")

    monkeypatch.setattr(pii._engine().anonymizer, "anonymize", boom)
    with pytest.raises(MaskingError) as caught:
        mask(secret)
    assert "Lucía" not in str(caught.value) and "12345678Z" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


def test_fails_closed_when_a_recognizer_breaks(monkeypatch):
    def boom(text, *args, **kwargs):
        raise RuntimeError(text)

    monkeypatch.setattr(pii._engine().recognizers[0], "analyze", boom)
    with pytest.raises(MaskingError) as caught:
        mask("juan.perez@gmail.com")
    assert "juan.perez" not in str(caught.value) and caught.value.__context__ is None


def test_rejects_non_text_input():
    with pytest.raises(MaskingError):
        mask(b"juan.perez@gmail.com")  # type: ignore[arg-type]


def test_never_logs_the_input(caplog):
    with caplog.at_level(logging.DEBUG):
        mask("IBAN ES91 2100 0418 4502 0005 1333 y correo juan.perez@gmail.com")
    assert "juan.perez" not in caplog.text and "ES91" not in caplog.text


def test_builds_and_masks_without_the_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(pii, "_ENGINE", None)  # rebuild the engines with the network blocked
    out = mask("escribe a juan.perez@gmail.com o https://tienda.es/reset?token=abc123def456")
    assert out.entities == ("EMAIL", "URL")


def test_engines_are_built_once_across_threads(monkeypatch):
    monkeypatch.setattr(pii, "_ENGINE", None)
    results, engines = [], []

    def worker():
        results.append(mask("Mi móvil es 612345678"))
        engines.append(pii._engine())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {r.text for r in results} == {"Mi móvil es <PHONE>"} and len({id(e) for e in engines}) == 1


@pytest.mark.parametrize("language", [None, "es", "pt", "en"])
def test_language_is_only_a_hint(language):
    assert mask("Mi móvil es 612345678", language).text == "Mi móvil es <PHONE>"
