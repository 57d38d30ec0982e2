"""The words of an operation request, for the offline responder (#18): what a message asks to do, as features.

A message and an operation's example phrasings are compared as sets of *features*: a word of a small hand-written
concept table (es/pt/en, accents folded: "cambiar" ~ "mudar" ~ "change", "correo" ~ "e-mail", "pedido" ~
"encomenda" ~ "order") stands for its concept, so phrasings match across the three languages; any other content
word stands for its stem in the message's language (the keyword index's analyzer). Framing (wanting, being able,
courtesy, the verbs of looking something up) and stop words are left out: they say how one asks, not what.
Pure data and lookups.
"""
from __future__ import annotations

import re
from functools import lru_cache

from core.base.language import ANALYZED, fold, stopwords
from core.knowledge.keyword_index import terms

#: concept -> its words (folded), es / pt / en mixed; one word, one concept
CONCEPTS: dict[str, str] = {
    "change": "cambiar cambio cambia cambie cambies cambiame cambiarlo cambiarla modificar modifica modifique "
              "actualizar actualiza actualice actualizame editar edita corregir corrige reemplazar sustituir nuevo "
              "nueva mudar muda mude mudanca alterar altera altere alteracao atualizar atualiza atualize trocar troca "
              "troque substituir novo nova change changed changing update updated modify edit replace new set "
              "switch upgrade downgrade pasarme",
    "email": "email emails mail correo electronico correio eletronico electronic",
    "address": "direccion domicilio endereco morada address",
    "delivery": "entrega entregar envio enviar envia enviado reparto remessa delivery deliver delivered shipping "
                "ship shipment shipped dispatch",
    "order": "pedido pedidos orden compra encomenda encomendas order orders purchase",
    "whereabouts": "donde onde where estado situacion situacao status rastrear rastreo rastreio seguimiento "
                   "localizar paradero track tracking trace",
    "when": "cuando quando when",
    "arrive": "llegar llega llegara llegado llegada chegar chega chegou chegada arrive arrives arrived arrival",
    "cancel": "cancelar cancela cancele anular anula cancelacion cancelamento cancel cancellation",
    "booking": "reserva reservas cita citas booking bookings reservation appointment agendamento marcacao",
    "reschedule": "reprogramar aplazar posponer reagendar remarcar adiar reschedule postpone",
    "contact": "contacto contato contact",
    "phone": "telefono movil celular telefone telemovel phone mobile",
    "password": "contrasena clave senha password",
    "account": "cuenta conta account perfil profile",
    "refund": "reembolso reembolsar devolucion devolver devolucao refund return",
    "invoice": "factura facturas fatura faturas invoice invoices recibo receipt",
    "payment": "pago pagar pagamento payment pay",
    "name": "nombre nome name",
    "date": "fecha data date",
    "time": "hora horario time",
    "product": "producto produto product articulo artigo item",
    "subscription": "suscripcion subscricao assinatura subscription plan plano planes planos plans",
    "number": "numero numeros number numbers num nro",
}
#: the concepts that name the change a write operation makes
ACTIONS = frozenset({"@change", "@cancel", "@reschedule", "@refund"})
#: how one asks, not what: wanting, being able, courtesy, looking something up (folded)
FRAMING = frozenset(fold(w) for w in (
    "quiero quisiera queria querria necesito deseo desearia gustaria podria podrias puedo puedes puede pueden podeis "
    "hola buenas buenos dias tardes noches gracias favor porfa ayuda ayudar ayudame hacer haz hazme saber conocer "
    "consultar ver mirar comprobar verificar revisar decir dime tengo tienes mio mia "
    "quero gostaria preciso desejo posso pode podes poderia podia ola obrigado obrigada ajuda ajudar fazer faca "
    "consultar verificar saber ver diga meu minha "
    "want wanted would like need wish can could please help hi hello hey thanks thank know tell check see look "
    "find let lets make get give mine").split())
_WORD = re.compile(r"[^\W\d_]{2,}")


@lru_cache(maxsize=8)
def _by_stem(lang: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for concept, words in CONCEPTS.items():
        for word in words.split():
            for stem in terms(lang, word) or [word]:
                out.setdefault(stem, concept)
    return out


@lru_cache(maxsize=8)
def _by_word() -> dict[str, str]:
    return {word: concept for concept, words in CONCEPTS.items() for word in words.split()}


@lru_cache(maxsize=16384)
def _stem(lang: str, word: str) -> str:
    found = terms(lang, word)
    return found[0] if found else ""


#: pronouns a Spanish or Portuguese verb carries at its end ("cámbiamelo", "cambiadme", "altere-o")
_ENCLITICS = ("melo", "mela", "selo", "sela", "me", "nos", "lo", "la", "le", "los", "las", "o", "a")


@lru_cache(maxsize=16384)
def concept_of(word: str, lang: str) -> str:
    """The concept of a (folded) word, '' when it has none: as written, or its stem in the message's language, then
    in the other two (the stemmers miss forms: 'cambiáis', 'actualizais'), with an enclitic pronoun taken off."""
    if word in _by_word():
        return _by_word()[word]
    forms = [word, *(word[: -len(p)] for p in _ENCLITICS if word.endswith(p) and len(word) - len(p) >= 5)]
    for code in dict.fromkeys((lang, *ANALYZED)):
        for form in forms:
            concept = _by_stem(code).get(_stem(code, form))
            if concept:
                return concept
    return ""


def features(text: str, lang: str) -> frozenset[str]:
    """What ``text`` asks about: its concepts ('@order') and its other content stems ('es:tiend'); no figures,
    no framing, no stop words."""
    out, stop = set(), stopwords(lang)  # the three languages' stop words: a message may mix them
    for word in _WORD.findall(fold(text)):
        if word in FRAMING or (word in stop and word not in _by_word()):  # 'donde', 'when' name a concept
            continue
        concept = concept_of(word, lang)
        if concept:
            out.add(f"@{concept}")
        elif stem := _stem(lang, word):
            out.add(f"{lang}:{stem}")
    return frozenset(out)


def related_words(words: set[str]) -> set[str]:
    """``words`` with every word sharing a concept with one of them ('order' -> 'pedido', 'encomenda', ...); the
    words of changing ('nueva', 'update') name no parameter and are left out."""
    table = _by_word()
    concepts = {table[w] for w in words if w in table} - {"change"}
    return {w for w in words if table.get(w) != "change"} | {w for c in concepts for w in CONCEPTS[c].split()}
