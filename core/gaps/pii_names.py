"""Names a person announces (G2): a name after a cue ("me llamo", "my name is", a greeting, a title, a
sign-off, a label), as spans for the masker. No spaCy model is usable offline, so names need their cue."""
from __future__ import annotations

import re

WORD_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
PARTICLES = {"de", "del", "la", "las", "los", "da", "do", "das", "dos", "van", "von", "der", "di", "du", "le"}
# the article a Spanish or Portuguese self-introduction may put before a name ("Sou a Maria Santos", "Soy la María")
INTRO_ARTICLES = {"soy": re.compile(r"(?i)(?:la|el)[ \t]+"), "sou": re.compile(r"(?i)(?:a|o)[ \t]+")}
RELATIVES = (r"(?:my|mi|mis|meu|minha) (?:son|daughter|kid|child|wife|husband|partner|mother|mom|father|dad|brother|"
             r"sister|hij[oa]|niñ[oa]|espos[oa]|marido|mujer|pareja|madre|padre|herman[oa]|novi[oa]|filh[oa]|"
             r"mulher|mãe|pai|irmã|irmão|namorad[oa])")
INTRO_CUES = (r"me llamo|mi nombre es|le habla|te habla|les habla|soy|meu nome é|meu nome e|me chamo|chamo-me|"
              r"eu sou|sou|aqui é|aqui fala|my name is|my name's|i am|i'm|i’m|call me|name is|nombre es|nome é|"
              r"se llama|se chama|a nombre de|en nombre de|de parte de|"
              r"em nome de|in the name of|on behalf of|(?:remitido|emitido|atendido|firmado|enviado|signed|sent) "
              r"(?:por|by):?|" + RELATIVES)
SIGNOFF_CUES = (r"saludos|un saludo|atentamente|cordialmente|gracias|muchas gracias|mil gracias|un abrazo|besos|"
                r"obrigad[oa]|muito obrigad[oa]|atenciosamente|cumprimentos|abraços?|att|thanks|thank you|"
                r"many thanks|regards|best regards|kind regards|warm regards|best wishes|cheers|best|sincerely")
GREETING_CUES = (r"hola|buenas|buenos días|estimad[oa]s?|querid[oa]|olá|oi|bom dia|boa tarde|prezad[oa]|car[oa]|"
                 r"hi|hello|hey|dear|good morning|good afternoon")
TITLE_CUES = r"sra\.ª|sr|sra|srta|dr|dra|dña|doña|don|mr|mrs|ms|miss|prof|senhor|senhora|doctora?|doutora?"
LABEL_CUES = (r"nombre(?: completo| y apellidos)?|apellidos?|nome(?: completo)?|sobrenome|(?:full |first |last )?name|"
              r"surname|titular|paciente|patient|m[eé]dico|enfermer[oa]|responsable cl[ií]nico|contacto|contact")
PERSON_CUE_RE = re.compile(
    rf"(?i)(?:(?P<intro>(?<![\w'’])(?:{INTRO_CUES})(?!\w))|(?P<this>(?:^|(?<=[.!?,;:\n])|(?<=\bhi)|(?<=\bhello)"
    rf"|(?<=\bhey)|(?<=\bhola)|(?<=\bolá)|(?<=\boi))\s*this is(?!\w))|(?P<sign>(?:^|(?<=\n)|(?<=[.!?]))\s*"
    rf"(?:{SIGNOFF_CUES})(?!\w)[,.!]*)|(?P<greet>(?:^|(?<=\n))\s*(?:{GREETING_CUES})(?!\w))"
    rf"|(?P<title>(?<!\w)(?:{TITLE_CUES})(?!\w)[.:]?)|(?P<label>(?<!\w)(?:{LABEL_CUES})\s*:))[ \t]*\n?[ \t]*(?=\w)")
EXPLICIT_CUE_RE = re.compile(r"(?i)nombre|name|nome|llamo|chamo|llama|chama")
# first-person cues after which a name may be written in lowercase ("hola me llamo lucas martín")
LOWERCASE_CUE_RE = re.compile(r"(?i)(?:me llamo|mi nombre es|me chamo|chamo-me|meu nome [ée]|my name(?: is|'s|’s))\s*$")
NOT_LOWERCASE_NAMES = set("""
y e and que pero but con com with por para for from of en em in a o the al ao to on at tengo quiero necesito tenho
quero preciso have want need is es está and am sou soy estoy estou was era fue foi has had
wrong incorrect incorrectly misspelled misspelt spelled spelt missing different incomplete shown showing written
displayed correct right changed still too long short not also listed
incorrecto incorrecta erróneo errónea equivocado equivocada distinto distinta diferente incompleto incompleta
mal bien demasiado largo corto correcto correcta otro otra igual
errado errada incorreto incorreta inválido inválida outro outra diferente comprido curto certo
""".split())
CLOSING_AFTER = {"sign": re.compile(r"[ \t]*[.!]?[ \t]*(?:\n|$)"), "greet": re.compile(r"[ \t]*(?:[,!:\n]|$)")}
NOT_NAMES = set("""
yo el la los las un una unos unas de del muy no si sí y o nuevo nueva cliente clienta usuario usuaria socio socia
miembro dueño dueña propietario propietaria hola buenos buenas gracias equipo soporte atención premium admin
administrador administradora responsable estudiante español española mexicano mexicana argentino argentina
colombiano colombiana chileno chilena peruano peruana venezolano venezolana ecuatoriano ecuatoriana
eu o a os as um uma não sim novo nova cliente usuário usuária sócio sócia olá oi bom boa obrigado obrigada equipe
equipa suporte brasileiro brasileira português portuguesa
i not unable having trying looking going so sorry just still also here the an in on from at with very really new
interested writing calling contacting sure glad happy ok okay yes hi hello customer client user member pro team
support spanish portuguese english brazilian mexican american british argentinian french german italian
canadian chilean colombian peruvian unsure confused afraid able aware currently again done back already
doctor doutor estimado estimada querido querida prezado prezada caro cara
lunes martes miércoles jueves viernes sábado domingo monday tuesday wednesday thursday friday saturday sunday
""".split()) | set(re.findall(r"[^\W\d_]{2,}", f"{SIGNOFF_CUES} {GREETING_CUES} {TITLE_CUES}".lower()))


def person_spans(text: str) -> list[tuple[int, int]]:
    """Names right after a cue: 1–3 capitalised words (4 after a label), particles allowed between them."""
    spans = []
    for cue in PERSON_CUE_RE.finditer(text):
        limit, pos, words, end, upper = (4 if cue["label"] else 3), cue.end(), 0, None, None
        explicit = cue["label"] or EXPLICIT_CUE_RE.search(cue.group())  # "this is URGENT" is no name
        lowercase_ok = cue["intro"] and LOWERCASE_CUE_RE.search(cue.group())
        article_re = INTRO_ARTICLES.get(cue.group().split()[-1].lower()) if cue["intro"] else None
        article = article_re.match(text, pos) if article_re else None
        if article and text[article.end():article.end() + 1].isupper():
            pos = article.end()
        while words < limit and (word := WORD_RE.match(text, pos)):
            token = word.group()
            if token.lower() in PARTICLES and (words or (cue["label"] and token[0].isupper())):
                pos = word.end() + len(re.match(r"[ \t]*(?:(?:la|las|los)[ \t]+)?", text[word.end():]).group())
                continue
            lower = not token[0].isupper()
            if ((lower and not (lowercase_ok and token.lower() not in NOT_LOWERCASE_NAMES))
                    or token.lower() in NOT_NAMES or len(token) < 2 or "º" in token
                    or upper not in (None, token.isupper()) or (token.isupper() and not explicit)):
                break  # "Soy cliente", "I'm Unable", "Juan Pérez DNI": not (part of) a name
            words, end, upper = words + 1, word.end(), token.isupper()
            pos = end + len(re.match(r"[ \t]*", text[end:]).group())
        closing = CLOSING_AFTER.get(cue.lastgroup)
        if end is not None and (closing is None or closing.match(text, end)):
            spans.append((cue.end(), end))  # a sign-off name closes its line, a greeting's is followed by ","
    return spans
