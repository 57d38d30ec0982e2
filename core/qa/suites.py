"""QA regression suites (Q2): saved cases with an expectation, runs with a pass rate, the diff between runs,
JSONL import and export.

A case is a question (optionally after earlier user messages of the same conversation, its ``prefix``) on a
channel, and what the agent must do with it: ``answered`` (optionally citing a source path, or a path
below a folder), ``partial`` (the material covers the topic but not the point asked: the answer says what it
does not mention, then the closest cited facts; ``cite`` checks those), ``abstains`` (the agent says the material
does not cover it; a partial answer does not pass), ``handoff``, or ``card`` (propose a card; cards are not built
yet, so such a case is stored, imported and exported, and always fails with a detail that says so).

A run asks every case through the agent as a *rehearsal* (``core.channels.turn.Rehearsal``): an in-memory
conversation, so a prefix feeds the history and the handoff rule counts uncovered questions exactly as in
a stored conversation, but nothing reaches the conversation log, the gap backlog or the handoff queue.

Every function takes the TenantContext first and every statement carries ``tenant_id``; another tenant's
suite, case or run answers exactly like a missing one. Changing suites and cases needs the ``qa`` role
(admins have every role); listing, exporting and running need only membership.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Iterable

from core.base.store import Store
from core.qa import records
from core.qa.cases import (
    Case,
    ImportReport,
    QaError,
    Suite,
    case_key,
    cites,
    clean_suite_name,
    parse_jsonl,
    require_qa,
    validate_case,
)
from core.tenancy.context import TenantContext

# -- suites ------------------------------------------------------------------------------------------------
_SUITE_SQL = (
    "SELECT s.id, s.name, s.created_at, s.updated_at, s.created_by, "
    "(SELECT COUNT(*) FROM qa_cases c WHERE c.tenant_id = s.tenant_id AND c.suite_id = s.id AND c.deleted_at IS NULL) "
    "AS cases "
    "FROM qa_suites s WHERE s.tenant_id = ?"
)


def _suites(ctx: TenantContext, store: Store, where: str = "", params: Iterable = ()) -> list[Suite]:
    rows = store.query(f"{_SUITE_SQL}{where} ORDER BY s.name COLLATE NOCASE", [ctx.tenant_id, *params])
    last = records.last_runs(ctx, store, [row["id"] for row in rows])
    return [Suite(row["id"], row["name"], row["created_at"], row["updated_at"], row["created_by"], row["cases"],
                  last.get(row["id"])) for row in rows]


def list_suites(ctx: TenantContext, store: Store) -> list[Suite]:
    """The tenant's suites by name, each with its number of cases and its last run."""
    return _suites(ctx, store)


def get_suite(ctx: TenantContext, store: Store, ref: int | str) -> Suite | None:
    """A suite by id (an int, or a string of digits) or by name; None when this tenant has none such."""
    if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit()):
        found = _suites(ctx, store, " AND s.id = ?", [int(ref)])
    else:
        found = _suites(ctx, store, " AND s.name = ?", [" ".join(str(ref or "").split())])
    return found[0] if found else None


def suite_name(ctx: TenantContext, store: Store, suite_id: int) -> str | None:
    """The name of one of this tenant's suites by id; None when it has none such (a run names its suite)."""
    rows = store.query("SELECT name FROM qa_suites WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, suite_id])
    return rows[0]["name"] if rows else None


def require_suite(ctx: TenantContext, store: Store, ref: int | str) -> Suite:
    suite = get_suite(ctx, store, ref)
    if suite is None:
        raise QaError(f"No QA suite {str(ref)!r} in '{ctx.tenant_slug}'. "
                      f"List them with `python -m core qa suites {ctx.tenant_slug}`.")
    return suite


def create_suite(ctx: TenantContext, store: Store, name: str) -> Suite:
    require_qa(ctx)
    name = clean_suite_name(name)
    now = store.clock.stamp()
    with store.write() as db:
        if store.query("SELECT 1 FROM qa_suites WHERE tenant_id = ? AND name = ?", [ctx.tenant_id, name]):
            raise QaError(f"A suite named '{name}' already exists; pick another name or add cases to it.")
        suite_id = db.execute(
            "INSERT INTO qa_suites (tenant_id, name, created_at, updated_at, created_by) VALUES (?,?,?,?,?)",
            [ctx.tenant_id, name, now, now, ctx.actor],
        ).lastrowid
    return require_suite(ctx, store, suite_id)


def rename_suite(ctx: TenantContext, store: Store, suite_id: int, name: str) -> Suite:
    require_qa(ctx)
    name = clean_suite_name(name)
    with store.write() as db:
        suite = require_suite(ctx, store, suite_id)
        clash = store.query("SELECT id FROM qa_suites WHERE tenant_id = ? AND name = ?", [ctx.tenant_id, name])
        if clash and clash[0]["id"] != suite.id:
            raise QaError(f"A suite named '{name}' already exists; pick another name.")
        db.execute("UPDATE qa_suites SET name = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
                   [name, store.clock.stamp(), ctx.tenant_id, suite.id])
    return require_suite(ctx, store, suite.id)


def delete_suite(ctx: TenantContext, store: Store, suite_id: int) -> None:
    """Delete a suite with its cases and its runs."""
    require_qa(ctx)
    with store.write() as db:
        suite = require_suite(ctx, store, suite_id)
        records.delete_runs_of(ctx, store, suite.id)
        db.execute("DELETE FROM qa_cases WHERE tenant_id = ? AND suite_id = ?", [ctx.tenant_id, suite.id])
        db.execute("DELETE FROM qa_suites WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, suite.id])


# -- cases -------------------------------------------------------------------------------------------------
_CASE_COLUMNS = "id, suite_id, position, question, prefix, channel, expect, cite, card, note, facts, forbidden"


def _case(row: dict) -> Case:
    return Case(**{**row, **{k: tuple(json.loads(row[k])) for k in ("prefix", "facts", "forbidden")}})


def _json(texts) -> str:
    return json.dumps(list(texts), ensure_ascii=False)


def list_cases(ctx: TenantContext, store: Store, suite_id: int) -> list[Case]:
    """The suite's cases in order (an unknown or foreign suite raises like a missing one)."""
    suite = require_suite(ctx, store, suite_id)
    rows = store.query(f"SELECT {_CASE_COLUMNS} FROM qa_cases WHERE tenant_id = ? AND suite_id = ? "
                       "AND deleted_at IS NULL ORDER BY position, id", [ctx.tenant_id, suite.id])
    return [_case(r) for r in rows]


def get_case(ctx: TenantContext, store: Store, case_id: int) -> Case | None:
    rows = store.query(f"SELECT {_CASE_COLUMNS} FROM qa_cases WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL",
                       [ctx.tenant_id, case_id])
    return _case(rows[0]) if rows else None


def require_case(ctx: TenantContext, store: Store, case_id: int) -> Case:
    case = get_case(ctx, store, case_id)
    if case is None:
        raise QaError(f"No QA case #{case_id} in '{ctx.tenant_slug}'.")
    return case


def _insert(ctx: TenantContext, db, suite_id: int, position: int, fields: dict, now: str) -> int:
    return db.execute(
        "INSERT INTO qa_cases (tenant_id, suite_id, position, question, prefix, channel, expect, cite, card, note, "
        "facts, forbidden, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [ctx.tenant_id, suite_id, position, fields["question"], _json(fields["prefix"]), fields["channel"],
         fields["expect"], fields["cite"], fields["card"], fields["note"], _json(fields["facts"]),
         _json(fields["forbidden"]), now, now],
    ).lastrowid


def _next_position(ctx: TenantContext, store: Store, suite_id: int) -> int:
    """The next case number of the suite: deleted cases keep theirs, so a number never names two cases."""
    row = store.query("SELECT COALESCE(MAX(position), 0) AS top FROM qa_cases WHERE tenant_id = ? AND suite_id = ?",
                      [ctx.tenant_id, suite_id])
    return row[0]["top"] + 1


def _touch(ctx: TenantContext, db, suite_id: int, now: str) -> None:
    db.execute("UPDATE qa_suites SET updated_at = ? WHERE tenant_id = ? AND id = ?", [now, ctx.tenant_id, suite_id])


def add_case(ctx: TenantContext, store: Store, suite_id: int, question: str, *, expect: str = "answered",
             prefix: Iterable[str] = (), channel: str = "web", cite: str = "", card: str = "", note: str = "",
             facts: Iterable[str] = (), forbidden: Iterable[str] = ()) -> Case:
    """Append a case to a suite; it gets the suite's next case number."""
    require_qa(ctx)
    fields = validate_case({"question": question, "prefix": list(prefix), "channel": channel, "expect": expect,
                            "cite": cite, "card": card, "note": note, "facts": list(facts),
                            "forbidden": list(forbidden)})
    with store.write() as db:
        suite = require_suite(ctx, store, suite_id)
        case_id = _insert(ctx, db, suite.id, _next_position(ctx, store, suite.id), fields, store.clock.stamp())
        _touch(ctx, db, suite.id, store.clock.stamp())
    return require_case(ctx, store, case_id)


def edit_case(ctx: TenantContext, store: Store, case_id: int, question: str, *, expect: str = "answered",
              prefix: Iterable[str] = (), channel: str = "web", cite: str = "", card: str = "", note: str = "",
              facts: Iterable[str] = (), forbidden: Iterable[str] = ()) -> Case:
    """Replace a case's fields (its id, number and place in the suite stay, so runs before and after compare)."""
    require_qa(ctx)
    fields = validate_case({"question": question, "prefix": list(prefix), "channel": channel, "expect": expect,
                            "cite": cite, "card": card, "note": note, "facts": list(facts),
                            "forbidden": list(forbidden)})
    with store.write() as db:
        case = require_case(ctx, store, case_id)
        db.execute(
            "UPDATE qa_cases SET question = ?, prefix = ?, channel = ?, expect = ?, cite = ?, card = ?, note = ?, "
            "facts = ?, forbidden = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
            [fields["question"], _json(fields["prefix"]), fields["channel"], fields["expect"], fields["cite"],
             fields["card"], fields["note"], _json(fields["facts"]), _json(fields["forbidden"]), store.clock.stamp(),
             ctx.tenant_id, case.id],
        )
        _touch(ctx, db, case.suite_id, store.clock.stamp())
    return require_case(ctx, store, case_id)


def delete_case(ctx: TenantContext, store: Store, case_id: int) -> None:
    """Delete a case (its past results stay with their runs). The row stays, marked, so that its id is never
    given to another case: runs are compared case by case id."""
    require_qa(ctx)
    with store.write() as db:
        case = require_case(ctx, store, case_id)
        db.execute("UPDATE qa_cases SET deleted_at = ? WHERE tenant_id = ? AND id = ?",
                   [store.clock.stamp(), ctx.tenant_id, case.id])
        _touch(ctx, db, case.suite_id, store.clock.stamp())


def cases_citing(ctx: TenantContext, store: Store, path: str) -> list[dict]:
    """Live cases whose expected citation is ``path``, a folder holding it, or a path inside it (a folder
    being moved or edited): what an edit there could make pass or fail."""
    rows = store.query(
        "SELECT c.id, c.suite_id, s.name AS suite, c.question, c.expect, c.cite FROM qa_cases c "
        "JOIN qa_suites s ON s.tenant_id = c.tenant_id AND s.id = c.suite_id "
        "WHERE c.tenant_id = ? AND c.deleted_at IS NULL AND c.cite != '' ORDER BY c.suite_id, c.position, c.id",
        [ctx.tenant_id])
    return [row for row in rows if cites(path, row["cite"]) or cites(row["cite"], path)]


def repoint_cites(ctx: TenantContext, store: Store, old: str, new: str) -> int:
    """Sources under ``old`` moved to ``new``: cases expecting a citation there follow them."""
    with store.write() as db:
        return db.execute(
            "UPDATE qa_cases SET cite = ? || substr(cite, ?) WHERE tenant_id = ? AND deleted_at IS NULL AND "
            "(cite = ? OR (cite >= ? AND cite < ?))",
            [new, len(old) + 1, ctx.tenant_id, old, old + "/", old + "0"]).rowcount


# -- JSONL -------------------------------------------------------------------------------------------------
def import_jsonl(ctx: TenantContext, store: Store, suite: int | str, text: str, *, replace: bool = False,
                 create: bool = True) -> ImportReport:
    """Import cases into a suite (by id or name; a new name creates the suite when ``create``). All or nothing:
    a bad line imports nothing. A case identical to one already in the suite is skipped; ``replace`` first
    deletes the suite's cases (their past results stay)."""
    require_qa(ctx)
    parsed = parse_jsonl(text)
    with store.write() as db:
        found = get_suite(ctx, store, suite)
        created = found is None
        if found is None:
            if not create or isinstance(suite, int):
                require_suite(ctx, store, suite)
            found = create_suite(ctx, store, str(suite))
        removed = 0
        if replace:
            removed = db.execute("UPDATE qa_cases SET deleted_at = ? WHERE tenant_id = ? AND suite_id = ? "
                                 "AND deleted_at IS NULL", [store.clock.stamp(), ctx.tenant_id, found.id]).rowcount
        seen = {case_key(asdict(c)) for c in list_cases(ctx, store, found.id)}
        position, added, skipped = _next_position(ctx, store, found.id), 0, 0
        for fields in parsed:
            if case_key(fields) in seen:
                skipped += 1
                continue
            seen.add(case_key(fields))
            _insert(ctx, db, found.id, position, fields, store.clock.stamp())
            position, added = position + 1, added + 1
        _touch(ctx, db, found.id, store.clock.stamp())
    return ImportReport(require_suite(ctx, store, found.id), created, added, skipped, removed)


def export_jsonl(ctx: TenantContext, store: Store, suite_id: int | str) -> str:
    """The suite's cases as JSONL, one object per line, in order (what ``import_jsonl`` reads back)."""
    return "".join(json.dumps(c.line(), ensure_ascii=False) + "\n" for c in list_cases(ctx, store, suite_id))
