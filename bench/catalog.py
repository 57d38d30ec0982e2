"""Catalog benchmark: product sheets that differ only by code and figures (``python -m bench.catalog --split S``).

A seeded generator writes a Spanish catalog (about 116 sheets in four product families, each sheet naming its
code: word-number "Kripto-101", letters-number "XR-7", "SKU 4411-B", model "V30neo"), Q&A pairs each about one
code (a figure of the sheet, or a feature only that pair states), and two general pages. Dev and test use
different seeds *and* different families, so tuning on dev never sees a test sheet. Everything goes in through
the product's own file import (markdown sheets, a JSONL of Q&A pairs per family) and training, then every
question is asked through the turn pipeline with the offline responder.

Questions: one per product about one figure of its sheet (Spanish, a few English and Portuguese) and one per
feature pair about its own code (``covered``); the feature of a pair asked about another existing code
(``other_feature``: the material does not say it for that code); a figure asked about a code that does not exist
(``unknown_code``). Verdicts: ``right`` (answered, citing only sources of the code asked, with its figure),
``other_code`` (answered citing another code's source: must be 0), ``without_fact``, ``abstained`` (any status
but answered; for the uncovered kinds that is the right outcome). Each covered failure says whose it is: when a
source of the asked code is not the first passage the search selected (or a pair of that code written for another
question is) it is retrieval's; when the gate withheld what the responder wrote, the gate's; else the responder's.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

PREFIX = "catalogo"
SEEDS = {"dev": 1101, "test": 2202}
PRODUCTS_PER_FAMILY = 29
FIGURE_QA_SHARE = 0.2     # products with a Q&A pair that repeats one of their sheet's figures
FEATURE_PAIRS = 2         # per family: a pair stating a feature of one code only
UNKNOWN_PER_FAMILY = 3
FOREIGN_SHARE = 0.12      # covered questions asked in English or Portuguese
_ART = {"m": {"es": ("el", "del"), "pt": ("o", "do")}, "f": {"es": ("la", "de la"), "pt": ("a", "da")}}

#: attribute -> (sheet label, prose verb phrase, question forms per language)
ATTRS = {
    "peso": ("Peso", "pesa {v}", {
        "es": ["¿Cuánto pesa {el} {noun} {code}?", "¿Qué peso tiene {el} {noun} {code}?"],
        "en": ["How much does the {code} {noun} weigh?"], "pt": ["Quanto pesa {o} {noun} {code}?"]}),
    "precio": ("Precio", "cuesta {v}", {
        "es": ["¿Cuánto cuesta {el} {noun} {code}?", "¿Qué precio tiene {el} {noun} {code}?"],
        "en": ["How much is the {code} {noun}?"], "pt": ["Quanto custa {o} {noun} {code}?"]}),
    "garantia": ("Garantía", "tiene una garantía de {v}", {
        "es": ["¿Qué garantía tiene {el} {noun} {code}?", "¿Cuánto dura la garantía {del} {noun} {code}?"],
        "en": ["What is the warranty on the {code} {noun}?"], "pt": ["Qual é a garantia {do} {noun} {code}?"]}),
    "tallas": ("Tallas", "se vende en las tallas {v}", {
        "es": ["¿En qué tallas está disponible {el} {noun} {code}?"],
        "en": ["What sizes does the {code} {noun} come in?"], "pt": ["Em que tamanhos vem {o} {noun} {code}?"]}),
    "potencia": ("Potencia", "tiene una potencia de {v}", {
        "es": ["¿Qué potencia tiene {el} {noun} {code}?"],
        "en": ["What is the power of the {code} {noun}?"], "pt": ["Qual é a potência {do} {noun} {code}?"]}),
    "capacidad": ("Capacidad", "tiene una capacidad de {v}", {
        "es": ["¿Qué capacidad tiene {el} {noun} {code}?"],
        "en": ["What is the capacity of the {code} {noun}?"], "pt": ["Qual é a capacidade {do} {noun} {code}?"]}),
    "autonomia": ("Autonomía", "ofrece una autonomía de {v}", {
        "es": ["¿Cuánta autonomía tiene {el} {noun} {code}?", "¿Cuántas horas dura la batería {del} {noun} {code}?"],
        "en": ["How long does the battery of the {code} {noun} last?"],
        "pt": ["Quanto dura a bateria {do} {noun} {code}?"]}),
    "plazas": ("Plazas", "es para {v}", {
        "es": ["¿Para cuántas personas es {el} {noun} {code}?"],
        "en": ["How many people does the {code} {noun} sleep?"], "pt": ["Para quantas pessoas é {o} {noun} {code}?"]}),
}


def _grams(rng, lo, hi):
    return f"{rng.randrange(lo, hi)} g"


def _kilos(rng, lo, hi):
    return f"{rng.randrange(lo * 10, hi * 10) / 10:.1f}".replace(".", ",") + " kg"


def _price(rng, lo, hi):
    return f"{rng.randrange(lo, hi)},{rng.choice(['00', '50', '90', '95', '99'])} €"


def _one_of(*options):
    return lambda rng: rng.choice(options)


_warranty = _one_of("1 año", "2 años", "3 años", "5 años", "18 meses", "30 meses")
_sizes = _one_of("S, M y L", "M y L", "S y M", "XS, S y M", "L y XL", "S, M, L y XL")
_shoe_sizes = _one_of(*(f"de la {lo} a la {hi}" for lo in range(35, 40) for hi in range(lo + 5, lo + 9)))


#: split -> families: (folder, nouns es/en/pt, gender es/pt, code style, description, feature Q&A, figures)
FAMILIES = {
    "dev": [
        ("cascos", ("casco", "helmet", "capacete"), ("m", "m"), "word",
         "es un casco de ciclismo de carretera con {n} ventilaciones y cierre magnético",
         ("¿{El} {noun} {code} incluye visera?",
          "Sí, {el} {noun} {code} incluye una visera desmontable.", "visera desmontable"),
         {"peso": lambda r: _grams(r, 190, 420), "precio": lambda r: _price(r, 39, 260),
          "garantia": _warranty, "tallas": _sizes}),
        ("bicicletas", ("bicicleta", "bike", "bicicleta"), ("f", "f"), "letters",
         "es una bicicleta de montaña con cuadro de aluminio y {n} velocidades",
         ("¿{El} {noun} {code} lleva frenos de disco?",
          "Sí, {el} {noun} {code} lleva frenos de disco hidráulicos.", "hidráulicos"),
         {"peso": lambda r: _kilos(r, 9, 17), "precio": lambda r: _price(r, 390, 2900),
          "garantia": _warranty, "tallas": _sizes}),
        ("lamparas", ("lámpara de pie", "floor lamp", "luminária de chão"), ("f", "f"), "sku",
         "es una lámpara de pie LED con brazo articulado y {n} niveles de luz",
         ("¿{El} {noun} {code} es regulable?",
          "Sí, {el} {noun} {code} es regulable con un mando a distancia.", "mando a distancia"),
         {"potencia": lambda r: f"{r.randrange(4, 40)} W", "precio": lambda r: _price(r, 19, 180),
          "garantia": _warranty, "peso": lambda r: _grams(r, 400, 2400)}),
        ("mochilas", ("mochila", "backpack", "mochila"), ("f", "f"), "model",
         "es una mochila de senderismo con espalda ventilada y {n} bolsillos",
         ("¿{El} {noun} {code} es impermeable?",
          "Sí, {el} {noun} {code} es impermeable y trae funda de lluvia.", "funda de lluvia"),
         {"capacidad": lambda r: f"{r.randrange(12, 70)} litros", "peso": lambda r: _grams(r, 450, 1900),
          "precio": lambda r: _price(r, 29, 240), "garantia": _warranty}),
    ],
    "test": [
        ("zapatillas", ("zapatilla", "running shoe", "tênis"), ("f", "m"), "word",
         "es una zapatilla de running con suela de carbono y drop de {n} mm",
         ("¿{El} {noun} {code} es apta para trail?",
          "Sí, {el} {noun} {code} es apta para trail por su suela de tacos.", "suela de tacos"),
         {"peso": lambda r: _grams(r, 180, 340), "precio": lambda r: _price(r, 59, 230),
          "garantia": _warranty, "tallas": _shoe_sizes}),
        ("tiendas", ("tienda de campaña", "tent", "barraca"), ("f", "f"), "letters",
         "es una tienda de campaña de montaña con doble techo y {n} vientos",
         ("¿{El} {noun} {code} tiene ábside?",
          "Sí, {el} {noun} {code} tiene un ábside para guardar las mochilas.", "guardar las mochilas"),
         {"plazas": lambda r: f"{r.randrange(1, 7)} personas", "peso": lambda r: _kilos(r, 1, 9),
          "precio": lambda r: _price(r, 49, 690), "garantia": _warranty}),
        ("cafeteras", ("cafetera", "coffee maker", "cafeteira"), ("f", "f"), "sku",
         "es una cafetera espresso con vaporizador y {n} programas",
         ("¿{El} {noun} {code} admite cápsulas?",
          "Sí, {el} {noun} {code} admite cápsulas con su adaptador.", "adaptador"),
         {"potencia": lambda r: f"{r.randrange(800, 2400, 50)} W",
          "capacidad": lambda r: f"{r.randrange(8, 30) / 10:.1f}".replace(".", ",") + " litros",
          "precio": lambda r: _price(r, 69, 890), "garantia": _warranty}),
        ("auriculares", ("auricular", "headphone", "fone"), ("m", "m"), "model",
         "es un auricular inalámbrico con cancelación de ruido y {n} micrófonos",
         ("¿{El} {noun} {code} es resistente al agua?",
          "Sí, {el} {noun} {code} es resistente al agua (IPX4).", "IPX4"),
         {"autonomia": lambda r: f"{r.randrange(6, 60)} horas", "peso": lambda r: _grams(r, 4, 320),
          "precio": lambda r: _price(r, 25, 420), "garantia": _warranty}),
    ],
}
_STEMS = ["Kripto", "Vento", "Orion", "Nimbo", "Lumo", "Runa", "Tauro", "Brisa"]
GENERAL = {"envios": ("Envíos", "Los pedidos se envían en 24 a 48 horas laborables. El envío es gratuito desde 50 €."),
           "devoluciones": ("Devoluciones", "Puedes devolver cualquier producto en un plazo de 30 días naturales "
                                            "desde la entrega, sin coste.")}


def _code_maker(style: str, rng: random.Random):
    """A function n -> the n-th distinct code of the family's style (its numbers drawn once, seeded)."""
    if style == "word":
        stem, numbers = rng.choice(_STEMS), rng.sample(range(100, 400), 60)
        return lambda n: f"{stem}-{numbers[n]}"
    if style == "letters":  # XR-7 next to TX-7: the same number under another prefix is another product
        prefixes, numbers = rng.sample(["XR", "TX", "MK", "ZR", "QS"], 2), sorted(rng.sample(range(2, 60), 20))
        return lambda n: f"{prefixes[n % 2]}-{numbers[n // 2]}"
    if style == "sku":  # SKU 4411-B next to SKU 4411-A
        bases = rng.sample(range(1000, 9999), 30)
        return lambda n: f"{bases[n // 2]}-{'AB'[n % 2]}"
    letter, suffixes = rng.choice("VTHQ"), ["neo", "pro", "air"]
    return lambda n: f"{letter}{20 + (n // 3) * 5}{suffixes[n % 3]}"


def _shown(style: str, code: str) -> str:
    return f"SKU {code}" if style == "sku" else code


def _fill(template: str, family: tuple, code: str, lang: str = "es") -> str:
    (folder, nouns, gender, style, *_rest) = family
    noun = nouns[{"es": 0, "en": 1, "pt": 2}[lang]]
    es, pt = _ART[gender[0]]["es"], _ART[gender[1]]["pt"]
    text = template.format(el=es[0], El=es[0].capitalize(), o=pt[0], do=pt[1], noun=noun, code=_shown(style, code),
                           **{"del": es[1]})
    return text[0].upper() + text[1:]


def _sheet(family: tuple, code: str, figures: dict, rng: random.Random) -> tuple[str, str]:
    """(title, markdown) of one product sheet: bullets or prose, the same words for every code of the family."""
    _folder, nouns, _gender, style, description, _feature, _gens = family
    title = f"{nouns[0].capitalize()} {_shown(style, code)}"
    intro = _fill("{el} {noun} {code} " + description.format(n=rng.randrange(3, 24)) + ".", family, code)
    if rng.random() < 0.5:
        body = "\n".join(f"- {ATTRS[a][0]}: {v}." for a, v in figures.items())
    else:  # prose: the first figure's sentence names the code, the others say "este modelo"
        body = " ".join(_fill(("{el} {noun} {code} " if i == 0 else "este modelo ") + ATTRS[a][1].format(v=v) + ".",
                              family, code) for i, (a, v) in enumerate(figures.items()))
    return title, f"# {title}\n\n{intro}\n\n{body}\n"


def _family(family: tuple, rng: random.Random) -> dict:
    """Products, Q&A pairs and questions of one family."""
    folder, _nouns, _gender, style, _description, feature, gens = family
    make = _code_maker(style, rng)
    codes = [make(n) for n in range(PRODUCTS_PER_FAMILY + UNKNOWN_PER_FAMILY)]
    assert len(set(codes)) == len(codes), codes
    products, pairs, questions = [], [], []
    for code in codes[:PRODUCTS_PER_FAMILY]:
        figures = {a: gen(rng) for a, gen in gens.items()}
        title, text = _sheet(family, code, figures, rng)
        products.append({"code": code, "family": folder, "file": f"{folder}/{code.lower()}.md", "title": title,
                         "text": text, "figures": figures})
        if rng.random() < FIGURE_QA_SHARE:
            attr = rng.choice(list(figures))
            pairs.append({"code": code, "family": folder, "attr": attr,
                          "question": _fill(ATTRS[attr][2]["es"][0], family, code),
                          "answer": _fill(f"{{el}} {{noun}} {{code}} {ATTRS[attr][1].format(v=figures[attr])}.",
                                          family, code)})
        attr = rng.choice(list(figures))
        lang = "es" if rng.random() >= FOREIGN_SHARE else rng.choice(["en", "pt"])
        questions.append({"kind": "covered", "code": code, "attr": attr, "language": lang, "fact": figures[attr],
                          "question": _fill(rng.choice(ATTRS[attr][2][lang]), family, code, lang)})
    owners = rng.sample(codes[:PRODUCTS_PER_FAMILY], FEATURE_PAIRS * 2)
    for owner, other in zip(owners[:FEATURE_PAIRS], owners[FEATURE_PAIRS:]):
        pairs.append({"code": owner, "family": folder, "attr": "feature", "question": _fill(feature[0], family, owner),
                      "answer": _fill(feature[1], family, owner)})
        questions.append({"kind": "covered", "code": owner, "attr": "feature", "language": "es", "fact": feature[2],
                          "question": _fill(feature[0], family, owner)})
        questions.append({"kind": "other_feature", "code": other, "attr": "feature", "language": "es", "fact": None,
                          "question": _fill(feature[0], family, other)})
    for code in codes[PRODUCTS_PER_FAMILY:]:
        attr = rng.choice(list(gens))
        questions.append({"kind": "unknown_code", "code": code, "attr": attr, "language": "es", "fact": None,
                          "question": _fill(rng.choice(ATTRS[attr][2]["es"]), family, code)})
    return {"products": products, "pairs": pairs, "questions": questions}


def generate(split: str) -> dict:
    """The split's catalog, deterministic: products (with their sheets), Q&A pairs and questions."""
    rng = random.Random(SEEDS[split])
    out = {"products": [], "pairs": [], "questions": []}
    for family in FAMILIES[split]:
        part = _family(family, rng)
        for key in out:
            out[key] += part[key]
    for n, q in enumerate(out["questions"]):
        q["id"] = f"{split}-{n:03d}"
    return out


def write(catalog: dict, root: Path) -> None:
    """The catalog as files: one markdown sheet per product, a JSONL of Q&A pairs per family, general pages."""
    for product in catalog["products"]:
        path = root / product["file"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(product["text"], encoding="utf-8")
    for folder in sorted({p["family"] for p in catalog["products"]}):
        rows = [{"question": q["question"], "answer": q["answer"]} for q in catalog["pairs"] if q["family"] == folder]
        (root / folder / "preguntas.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    for name, (title, text) in GENERAL.items():
        (root / f"{name}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")


def _owners(catalog: dict, saved: list[str]) -> dict[str, tuple[str, str | None]]:
    """Each imported source's (product code, what a pair answers: an attribute, "feature"; None for a sheet)."""
    from core.knowledge.sources import slug

    owners = {f"{PREFIX}/{product['file'][:-3]}": (product["code"], None) for product in catalog["products"]}
    owners.update({f"{PREFIX}/{pair['family']}/preguntas/{slug(pair['question'])}": (pair["code"], pair["attr"])
                   for pair in catalog["pairs"]})
    missing = [path for path in owners if path not in saved]
    if missing:
        raise SystemExit(f"the import did not save {missing[:5]} (paths changed?); saved: {saved[:5]}")
    return owners


def _first_selected(result) -> list[str]:
    """The paths the (first) search selected, in rank order, from the turn's trace."""
    for call in result.trace.tools if result.trace else []:
        if call.get("tool") == "search_knowledge":
            return [c["path"] for c in call.get("candidates", []) if c.get("selected")]
    return []


def verdict(q: dict, status: str, answer: str, cited: set[str], owners: dict[str, tuple]) -> str:
    """right | other_code | without_fact | answered_same_code | answered_general | abstained (see the module doc)."""
    if status != "answered":
        return "abstained"
    codes = {owners.get(path, (None,))[0] for path in cited}
    if codes - {q["code"], None}:
        return "other_code"
    if q["code"] not in codes:
        return "answered_general"
    if q["kind"] != "covered":
        return "answered_same_code"
    flat = " ".join(answer.replace("**", "").split()).lower()
    return "right" if q["fact"].lower() in flat else "without_fact"


def _whose(q: dict, row: dict, owners: dict[str, tuple]) -> str | None:
    """A covered failure is retrieval's when the first passage selected is not a source of the code asked, or is
    a pair of that code written for another question; the gate's when it withheld what the responder wrote;
    otherwise the responder's."""
    if q["kind"] != "covered" or row["verdict"] == "right":
        return None
    code, attr = owners.get(row["selected"][0], (None, None)) if row["selected"] else (None, None)
    if code != q["code"]:
        return "retrieval"
    if attr not in (None, q["attr"]):
        return "retrieval: a pair for another question first"
    return "gate: withheld the responder's answer" if row["status"] != "answered" and row["withheld"] else "responder"


def _ask_all(rt, ctx, questions: list[dict], owners: dict[str, tuple]) -> list[dict]:
    from core.agent.loop import Agent
    from core.agent.providers.offline import OfflineResponder

    agent = Agent(rt, OfflineResponder())
    rows = []
    for q in questions:
        started = time.perf_counter()
        result = rt.turns.run(ctx, agent, q["question"], channel="web")
        cited = {c.get("path") for c in result.citations}
        row = {**q, "status": str(result.status), "answer": result.answer[:240], "cited": sorted(cited),
               "selected": _first_selected(result)[:6], "seconds": time.perf_counter() - started,
               "withheld": [c["detail"] for g in (result.trace.gate if result.trace else []) if not g.get("ok")
                            for c in g.get("claims", []) if c.get("verdict") not in ("supported", "exempt")][:2]}
        row["verdict"] = verdict(q, row["status"], result.answer, cited, owners)
        row["whose"] = _whose(q, row, owners)
        rows.append(row)
    return rows


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def summarize(rows: list[dict]) -> dict:
    """Counts and rates per kind of question, and per language for the covered ones."""
    out = {}
    for kind in ("covered", "other_feature", "unknown_code"):
        group = [r for r in rows if r["kind"] == kind]
        counts = Counter(r["verdict"] for r in group)
        out[kind] = {"questions": len(group), **dict(sorted(counts.items())),
                     "rates": {v: _rate(n, len(group)) for v, n in sorted(counts.items())}}
    covered = [r for r in rows if r["kind"] == "covered"]
    out["covered"]["failures_by_cause"] = dict(Counter(r["whose"] for r in covered if r["whose"]))
    # among the covered questions (right answers count as yes): the first passage is of the code asked / answers
    out["covered"]["first_passage_of_the_code"] = _rate(sum(r["whose"] != "retrieval" for r in covered), len(covered))
    out["covered"]["first_passage_answers"] = _rate(
        sum(not (r["whose"] or "").startswith("retrieval") for r in covered), len(covered))
    out["covered_per_language"] = {
        lang: {"questions": len(g), "right": sum(r["verdict"] == "right" for r in g),
               "rate": _rate(sum(r["verdict"] == "right" for r in g), len(g))}
        for lang in ("es", "en", "pt") if (g := [r for r in covered if r["language"] == lang])}
    out["other_code_total"] = sum(1 for r in rows if r["verdict"] == "other_code")
    return out


def run(split: str) -> dict:
    """Generate the split's catalog, import and train it in a throw-away tenant, ask every question; a report."""
    from bench.docs import code_fingerprint
    from bench.harness import cached_embedder, percentiles, scratch_settings
    from core.knowledge.ingest import import_paths
    from core.runtime import open_runtime
    from core.tenancy.context import local_operator
    from core.tenancy.tenants import create_tenant

    started = time.perf_counter()
    catalog = generate(split)
    rt = open_runtime(scratch_settings("catalog"), embedder=cached_embedder(cache_queries=True))
    create_tenant(rt.store, "bench")
    ctx = local_operator(rt.store, "bench")
    with tempfile.TemporaryDirectory(prefix="cobertura-catalog-") as tmp:
        write(catalog, Path(tmp))
        report = import_paths(ctx, rt.store, sorted(Path(tmp).iterdir()), prefix=PREFIX)
    owners, errors = _owners(catalog, report.saved), report.errors
    train = rt.index.train(ctx)
    trained = time.perf_counter()
    rows = _ask_all(rt, ctx, catalog["questions"], owners)
    rt.close()
    keep = ("id", "kind", "code", "language", "question", "fact", "verdict", "whose", "status", "answer", "cited",
            "selected", "withheld")
    return {"split": split, "responder": "offline", "code": code_fingerprint(),
            "catalog": {"families": [f[0] for f in FAMILIES[split]], "sheets": len(catalog["products"]),
                        "qa_pairs": len(catalog["pairs"]), "questions": len(rows)},
            "import_errors": errors, "train": train.as_dict(), split: summarize(rows),
            "turn_latency": percentiles([r["seconds"] for r in rows]),
            "seconds": {"import_and_train": round(trained - started, 1),
                        "total": round(time.perf_counter() - started, 1)},
            "failures": [{k: r[k] for k in keep} for r in rows
                         if r["verdict"] != ("right" if r["kind"] == "covered" else "abstained")]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.catalog", description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--show", action="store_true", help="print the generated catalog instead of running it")
    args = parser.parse_args(argv)
    report = generate(args.split) if args.show else run(args.split)
    json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
