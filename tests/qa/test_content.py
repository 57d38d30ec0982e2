"""QA cases that check what the answer says (facts it must say, texts it must not) and per-suite case numbers."""
from __future__ import annotations

import json

import pytest
import sqlite_utils

from core.qa import cases as qa_cases, runs as qa_runs, suites as qa
from core.qa.content import check_content, clean_content, normalize, says
from tests.qa.test_suites import covered, role_ctx, scripted
from tests.schema import migrate, schema_before

HEADING = "Envíos y plazos de entrega"  # the FAQ heading an answer may only repeat


# -- matching ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer, text, found", [
    ("Los envíos a Canarias tardan de 5 a 8 días laborables.", "5 a 8 DIAS", True),  # case and accents
    ("Tardan de 5 a\n 8   días.", "5 a 8 días", True),  # whitespace
    ("Tardan de **5 a 8 días** laborables [1].", "5 a 8 días laborables", True),  # emphasis and citation marks
    ("Tienes 130 días para devolverlo.", "30 días", False),  # whole words only
    ("Tienes 30 días naturales.", "30 días", True),
    ("O prazo é de trinta dias.", "TRINTA DIAS", True),
    ("It’s free over 60 €.", "it's free", True),  # typographic apostrophe
    ("Coste del envío: 4,95 €.", "4,95 €", True),
    ("Coste del envío: 4,95 €.", "4,9", False),
    ("", "algo", False),
])
def test_a_text_is_found_case_accent_and_space_insensitively_as_whole_words(answer, text, found):
    assert says(answer, text) is found


def test_normalize_folds_and_drops_marks():
    assert normalize("  ¿Cuánto   **CUESTA** [1][[cite:c9]]? ") == "¿cuanto cuesta ?"


def test_the_reason_names_what_was_missing_and_what_was_present():
    assert check_content("Tardan de 5 a 8 días.", ["5 a 8 días"], ["gratis"]) == ""
    assert check_content(HEADING, ["5 a 8 días", "Canarias"], []) == (
        f"the answer does not say “5 a 8 días” or “Canarias”. The answer was: “{HEADING}”.")
    assert check_content("El envío es gratis y tarda 2 días.", ["5 a 8 días"], ["gratis", "2 días"]) == (
        "the answer does not say “5 a 8 días”; it says “gratis” and “2 días”, which this case forbids. "
        "The answer was: “El envío es gratis y tarda 2 días.”.")
    long = "palabra " * 100
    assert check_content(long, ["otra"], []).endswith("…”.")  # the answer is cut, not the reason


# -- validation -------------------------------------------------------------------------------------------------------
def test_facts_and_forbidden_texts_are_checked_and_cleaned():
    line = {"question": "¿Plazo?", "expect": "answered", "facts": ["  30   días ", "30 DÍAS", ""],
            "forbidden": "gratis"}
    fields = qa_cases.validate_case(line)
    assert fields["facts"] == ("30 días",) and fields["forbidden"] == ("gratis",)  # repeats and blanks dropped
    assert qa_cases.case_line(fields) == {"question": "¿Plazo?", "expect": "answered", "facts": ["30 días"],
                                          "forbidden": ["gratis"]}
    assert qa_cases.describe(qa_cases.case_line(fields)) == "answered, saying “30 días”, never “gratis”"
    assert qa_cases.validate_case({"question": "¿Patinetes?", "expect": "abstains", "forbidden": ["sí"]})["forbidden"]
    for bad, message in [
        ({"facts": ["x"], "expect": "abstains"}, "'facts' go with expect 'answered' or 'partial' only"),
        ({"facts": [30]}, "'facts' must be a list of texts"),
        ({"forbidden": {"a": 1}}, "'forbidden' must be a list of texts"),
        ({"facts": ["x" * 201]}, "the limit is 200"),
        ({"facts": [f"f{n}" for n in range(11)]}, "'facts' has 11 texts; the limit is 10"),
        ({"facts": ["**"]}, "nothing to look for"),
        ({"facts": ["Gratis"], "forbidden": ["gratis"]}, "both a fact the answer must say and a text it must not"),
    ]:
        with pytest.raises(qa_cases.QaError, match=message.replace("(", r"\(")):
            qa_cases.validate_case({"question": "¿Plazo?", "expect": "answered", **bad})
    assert clean_content({}) == ((), ())


def test_a_bad_fact_in_jsonl_names_its_line():
    with pytest.raises(qa_cases.QaImportError, match="line 2: 'facts' must be a list of texts"):
        qa_cases.parse_jsonl('{"question": "a", "expect": "answered"}\n{"question": "b", "expect": "answered", '
                             '"facts": [1]}\n')


# -- judging an answer ------------------------------------------------------------------------------------------------
def test_an_answer_that_only_repeats_the_heading_fails_with_the_missing_fact():
    line = {"question": "¿Cuánto tarda un envío a Canarias?", "expect": "answered", "cite": "politicas/envios",
            "facts": ["5 a 8 días"]}
    citations = [{"id": "c1", "path": "politicas/envios"}]
    passed, why = qa_cases.evaluate(line, "answered", citations, {}, HEADING)
    assert not passed and why == (f"answered citing politicas/envios, but the answer does not say “5 a 8 días”. "
                                  f"The answer was: “{HEADING}”.")
    assert qa_cases.evaluate(line, "answered", citations, {}, "Tardan de 5 a 8 días laborables. [1]") == (True, "")
    # the status and the citation are judged first: their reason is the one given
    assert qa_cases.evaluate(line, "abstained", [], {}, "")[1].startswith("expected: answered citing politicas/envios"
                                                                        ", saying “5 a 8 días”; got: abstained")
    partial = {**line, "expect": "partial", "facts": [], "forbidden": ["Valencia tiene tienda"]}
    passed, why = qa_cases.evaluate(partial, "partial", citations, {"missing": ["Valencia"]},
                                    "No menciona Valencia. Valencia tiene tienda.")
    assert not passed and "it says" not in why and "the answer says “Valencia tiene tienda”" in why


def test_a_run_fails_a_heading_answer_and_passes_the_fact(kb, rt):
    suite = qa.create_suite(kb, rt.store, "content")
    first = qa.add_case(kb, rt.store, suite.id, "¿Cuánto tarda un envío a Canarias?", cite="politicas/envios",
                        facts=["5 a 8 días"], forbidden=["gratis"])
    assert (first.facts, first.forbidden) == (("5 a 8 días",), ("gratis",))
    heading = covered("envios", "Los envíos a Canarias tardan.", "envíos Canarias")
    fact = covered("envios", "Los envíos a Canarias tardan de 5 a 8 días laborables.", "envíos Canarias")
    run = qa_runs.run_suite(kb, rt, suite.id, agent=scripted(rt, heading))
    [result] = run.results
    assert result.status == "answered" and not result.passed
    assert result.detail == ("answered citing politicas/envios, but the answer does not say “5 a 8 días”. "
                             f"The answer was: “{result.answer}”.")
    assert result.case["facts"] == ["5 a 8 días"] and result.as_dict()["number"] == 1
    again = qa_runs.run_suite(kb, rt, suite.id, agent=scripted(rt, fact))
    assert again.results[0].passed
    diff = qa_runs.diff_runs(kb, rt.store, again.id)
    assert [(c["number"], c["before"], c["after"]) for c in diff.changed] == [(1, False, True)]


# -- storing, JSONL ---------------------------------------------------------------------------------------------------
def test_facts_are_stored_edited_exported_and_imported(kb, rt):
    suite = qa.create_suite(kb, rt.store, "round trip")
    case = qa.add_case(kb, rt.store, suite.id, "¿Plazo de devolución?", facts=["30 días"])
    edited = qa.edit_case(kb, rt.store, case.id, "¿Plazo de devolución?", facts=["30 días", "naturales"],
                          forbidden=["hábiles"])
    assert (edited.number, edited.facts, edited.forbidden) == (1, ("30 días", "naturales"), ("hábiles",))
    text = qa.export_jsonl(kb, rt.store, suite.id)
    assert json.loads(text) == {"question": "¿Plazo de devolución?", "expect": "answered",
                                "facts": ["30 días", "naturales"], "forbidden": ["hábiles"]}
    copy = qa.import_jsonl(kb, rt.store, "copy", text)
    assert [c.facts for c in qa.list_cases(kb, rt.store, copy.suite.id)] == [("30 días", "naturales")]
    # the same question with other facts is another case; the same facts again is skipped
    report = qa.import_jsonl(kb, rt.store, "copy", text + text.replace("naturales", "desde la entrega"))
    assert (report.added, report.skipped) == (1, 1)


# -- numbers per suite ------------------------------------------------------------------------------------------------
def test_cases_are_numbered_per_suite_and_a_number_is_never_reused(kb, rt, other_ctx):
    elsewhere = qa.create_suite(other_ctx, rt.store, "theirs")
    for n in range(3):  # another tenant's cases take global ids first
        qa.add_case(other_ctx, rt.store, elsewhere.id, f"¿Pregunta {n}?")
    smoke, returns = qa.create_suite(kb, rt.store, "smoke"), qa.create_suite(kb, rt.store, "returns")
    a = qa.add_case(kb, rt.store, smoke.id, "¿Uno?")
    b = qa.add_case(kb, rt.store, returns.id, "¿Otro?")
    c = qa.add_case(kb, rt.store, smoke.id, "¿Dos?")
    assert [(x.number, x.id) for x in (a, b, c)] == [(1, 4), (1, 5), (2, 6)]
    qa.delete_case(kb, rt.store, c.id)
    d = qa.add_case(kb, rt.store, smoke.id, "¿Tres?")
    assert d.number == 3  # #2 was deleted: its results still name it, so nobody else becomes #2
    imported = qa.import_jsonl(kb, rt.store, returns.id, '{"question": "¿Más?", "expect": "abstains"}\n')
    assert [x.number for x in qa.list_cases(kb, rt.store, imported.suite.id)] == [1, 2]
    assert qa.edit_case(kb, rt.store, a.id, "¿Uno, editado?").number == 1
    qa_role = role_ctx(rt, "qa")
    assert qa.add_case(qa_role, rt.store, qa.create_suite(qa_role, rt.store, "fresh").id, "¿Primero?").number == 1


def test_migration_015_keeps_numbers_adds_empty_facts_and_makes_numbers_unique(tmp_path):
    db = schema_before("015_qa_case_numbers", tmp_path / "old.db")
    db.execute("INSERT INTO tenants (id, slug, name, created_at) VALUES (1, 'acme', 'Acme', '2026-01-01')")
    db.execute("INSERT INTO qa_suites (tenant_id, id, name, created_at, updated_at, created_by) "
               "VALUES (1, 1, 's', 'x', 'x', 'x')")
    for case_id, position in ((1, 1), (2, 2), (3, 2), (4, 3)):  # #2 twice: only a copied database could hold it
        db.execute("INSERT INTO qa_cases (tenant_id, id, suite_id, position, question, expect, created_at, updated_at) "
                   "VALUES (1, ?, 1, ?, 'q', 'answered', 'x', 'x')", [case_id, position])
    migrate(db, "015_qa_case_numbers")
    rows = db.execute("SELECT id, position, facts, forbidden FROM qa_cases ORDER BY id").fetchall()
    assert rows == [(1, 1, "[]", "[]"), (2, 2, "[]", "[]"), (3, 4, "[]", "[]"), (4, 3, "[]", "[]")]
    with pytest.raises(sqlite_utils.db.sqlite3.IntegrityError):
        db.execute("INSERT INTO qa_cases (tenant_id, suite_id, position, question, expect, created_at, updated_at) "
                   "VALUES (1, 1, 1, 'q', 'answered', 'x', 'x')")
