"""Words that say the same thing, for the gate's support check (A3): support is judged on meaning, not
only on the words a source happens to use ("nicknamed" for "called", "defeated" for "beat").

Small tables per language, written by hand and kept conservative (no antonyms, no broader or narrower
terms): synonyms in the narrow sense, a few set phrases ("called" ~ "known as") and the expansions of
common abbreviations ("US" ~ "United States", never a looser name such as "America"). A claim word may
be found in a source as any word of its group; a name only as written or spelled out (an abbreviation),
never as a synonym; numbers are never relaxed here. Irregular verb forms ("wrote" ~ "written") are left
out: on the dev split they let a hallucinated "The Kingsmen wrote the song" through and gained little.
Pure data and one lookup.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

from core.base.language import fold

_SYNONYMS_EN = """
begin start started launch launched originate debut commence|found founded establish established
call called name named nickname nicknamed dub dubbed term termed refer referred
beat defeat|win victory|move relocate|make create produce|build construct|use utilize employ
help assist aid|buy purchase|pay salary wage|cost price|big large huge major giant enormous vast
biggest largest|small little tiny|main primary principal chief|quick fast rapid|show series program programme
movie film|kid child|people persons humans individuals|job occupation employment profession|car vehicle automobile
country nation|game match|ban prohibit forbid|allow permit|need require|get receive obtain|end finish
choose select pick|ship deliver|famous renowned|photo picture photograph
"""
_SYNONYMS_ES = """
empezar comenzar iniciar|coste costo precio cuesta cuestan|comprar adquirir|enviar mandar|ayudar asistir
necesitar requerir|permitir dejar|recibir obtener|elegir escoger seleccionar|terminar acabar finalizar
coche auto automovil vehiculo|gratis gratuito gratuita|rapido veloz|grande amplio|pais nacion
pelicula film|persona gente|trabajo empleo|llamar denominar|nacer nacimiento|morir muerte murio
"""
_SYNONYMS_PT = """
comecar iniciar|custo preco custa custam|comprar adquirir|enviar mandar|ajudar auxiliar|precisar necessitar
permitir deixar|receber obter|escolher selecionar|terminar acabar finalizar|carro automovel veiculo
gratis gratuito gratuita|rapido veloz|grande amplo|pais nacao|filme pelicula|crianca menino
pessoa gente|trabalho emprego|chamar denominar|nascer nascimento|morrer morte morreu
"""
#: abbreviations and what they stand for: an expansion is looked up as a phrase in a source sentence
_ABBREVIATIONS = {
    "us": ("united states", "usa"), "usa": ("united states", "us"), "uk": ("united kingdom",),
    "eu": ("european union",), "un": ("united nations",),
    "uae": ("united arab emirates",), "tv": ("television",), "nyc": ("new york city", "new york"),
    "max": ("maximum",), "min": ("minimum",), "info": ("information",), "temps": ("temperatures",),
    "approx": ("approximately",), "govt": ("government",), "dept": ("department",),
    "eeuu": ("estados unidos",), "eua": ("estados unidos",), "ue": ("union europea", "uniao europeia"),
}
#: set phrases that say what a word says: looked up as a phrase in a source sentence, like an expansion
_PHRASES = {w: ("known as",) for w in "call called calls name named nickname nicknamed".split()}
#: a birth or a death, which an encyclopedic source writes as a life span: "Elvis Presley (January 8, 1935 – ..."
_LIFE = {"en": "born birth die died death", "es": "nacer nacio nacido nacida nacimiento morir murio muerte fallecio",
         "pt": "nascer nasceu nascido nascida nascimento morrer morreu morte faleceu"}
_TABLES = {"en": _SYNONYMS_EN, "es": _SYNONYMS_ES, "pt": _SYNONYMS_PT}


@lru_cache(maxsize=8)
def _groups(lang: str, stem: Callable[[str, str], str | None]) -> dict[str, frozenset[str]]:
    """stem -> the stems of every word sharing a group with it (itself left out)."""
    out: dict[str, set[str]] = {}
    for group in _TABLES.get(lang, "").replace("\n", "|").split("|"):
        stems = {s for w in group.split() if (s := stem(lang, w) or fold(w))}
        for s in stems:
            out.setdefault(s, set()).update(stems - {s})
    return {s: frozenset(v) for s, v in out.items() if v}


def related(word_stem: str, word: str, lang: str, stem: Callable[[str, str], str | None],
            name: bool = False) -> tuple[str, ...]:
    """Stems of words that say what ``word`` says, and phrases (with a space) that spell it out; for a
    ``name`` only the expansion of an abbreviation ('US' ~ 'United States'), never a synonym."""
    spelled = _ABBREVIATIONS.get(fold(word), ())
    if name:
        return spelled
    phrases = _PHRASES.get(fold(word), ()) if lang == "en" else ()
    return tuple(sorted(_groups(lang, stem).get(word_stem, ()))) + spelled + phrases


@lru_cache(maxsize=8)
def _life_stems(lang: str, stem: Callable[[str, str], str | None]) -> frozenset[str]:
    return frozenset(s for w in _LIFE.get(lang, "").split() if (s := stem(lang, w)))


def life_event(word_stem: str, lang: str, stem: Callable[[str, str], str | None]) -> bool:
    """Whether the word says someone was born or died (a life span in parentheses says it too)."""
    return word_stem in _life_stems(lang, stem)
