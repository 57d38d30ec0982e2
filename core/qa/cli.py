"""The QA commands: ``python -m core qa suites|import|export|run ...``.

``qa run SLUG SUITE`` exits 0 when every case passes, 1 when any fails, 2 on a usage or input error, so
a tenant can run its suites in its own CI.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from core.base.errors import UserError
from core.qa import cases as qa_cases, runs as qa_runs, suites as qa

ACTIONS = ("suites", "import", "export", "run")
USAGE = ("python -m core qa suites SLUG | qa import SLUG SUITE FILE.jsonl [--replace] | qa export SLUG SUITE "
         "| qa run SLUG SUITE [--json]")


def _dump(data) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _suite_row(suite: qa_cases.Suite) -> dict:
    return {"id": suite.id, "name": suite.name, "cases": suite.cases, "updated_at": suite.updated_at,
            "last_run": suite.last_run}


def _print_run(run: qa_runs.Run, diff: qa_runs.RunDiff) -> None:
    print(f"Suite '{run.suite}' — run #{run.id} ({run.provider or 'no provider'}), {run.total} case(s)")
    for r in run.results:
        got = r.status + (f" [{', '.join(r.paths)}]" if r.paths else "")
        print(f"{'PASS' if r.passed else 'FAIL'}  #{r.number:<4} {_cut(qa_cases.describe(r.case), 34):<34} "
              f"{r.case.get('channel', 'web'):<10} {_cut(r.case['question'], 44):<44} {_cut(got, 40):<40} "
              f"{r.latency_ms:>6} ms")
        if not r.passed:
            print(f"      why: {r.detail}")
    rate = f"{run.pass_rate:.0%}" if run.pass_rate is not None else "—"
    print(f"{run.passed}/{run.total} passed ({rate})")
    if diff.previous_id is None:
        print("First run of this suite: nothing to compare with.")
        return
    if diff.empty:
        print(f"Compared with run #{diff.previous_id}: no case changed result or citations.")
        return
    print(f"Compared with run #{diff.previous_id}:")
    for c in diff.changed:
        print(f"  #{c['number']} {'FAIL -> PASS' if c['after'] else 'PASS -> FAIL'}  {_cut(c['question'], 60)}")
    for c in diff.cited:
        added = ", ".join(f"{x['id']} ({x['path']})" for x in c["added"]) or "—"
        removed = ", ".join(f"{x['id']} ({x['path']})" for x in c["removed"]) or "—"
        print(f"  #{c['number']} cites other chunks  {_cut(c['question'], 60)}\n      now also: {added}\n"
              f"      no longer: {removed}")
    for c in diff.new:
        print(f"  #{c['number']} new case ({'PASS' if c['passed'] else 'FAIL'})  {_cut(c['question'], 60)}")
    for c in diff.gone:
        print(f"  #{c['number']} no longer in the suite  {_cut(c['question'], 60)}")


def _qa(args, runtime, context) -> int:
    words = list(args.words)
    action = words.pop(0)
    if action not in ACTIONS:
        raise qa_cases.QaError(f"Unknown qa action {action!r}; use one of {', '.join(ACTIONS)}: {USAGE}")
    needs = {"suites": 1, "import": 3, "export": 2, "run": 2}[action]
    if len(words) != needs:
        raise qa_cases.QaError(f"qa {action} takes {needs} argument(s), got {len(words)}: {USAGE}")
    rt = runtime()
    ctx = context(rt, words[0])
    if action == "suites":
        suites = qa.list_suites(ctx, rt.store)
        if args.json:
            _dump([_suite_row(s) for s in suites])
        else:
            for s in suites:
                last = s.last_run
                summary = (f"last run #{last['id']}: {last['passed']}/{last['total']} passed ({last['finished_at']})"
                           if last else "never run")
                print(f"#{s.id:<4} {s.name:<30} {s.cases:>4} case(s)  {summary}")
            print(f"{len(suites)} suite(s)" if suites
                  else f"No QA suites. Import one: python -m core qa import {ctx.tenant_slug} NAME FILE.jsonl")
        return 0
    if action == "import":
        path = Path(words[2])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise qa_cases.QaError(f"Cannot read {path}: {exc}") from exc
        report = qa.import_jsonl(ctx, rt.store, words[1], text, replace=args.replace)
        if args.json:
            _dump(report.as_dict())
        else:
            print(f"Imported {report.added} case(s) into suite '{report.suite.name}'"
                  + (" (created)" if report.created else "")
                  + (f"; {report.skipped} already there, skipped" if report.skipped else "")
                  + (f"; {report.removed} replaced" if report.removed else "")
                  + f". The suite has {report.suite.cases} case(s).")
        return 0
    if action == "export":
        sys.stdout.write(qa.export_jsonl(ctx, rt.store, words[1]))
        return 0
    suite = qa.require_suite(ctx, rt.store, words[1])
    def progress(step: qa_runs.RunProgress) -> None:
        print(f"\r  case {step.done}/{step.total}", end="\n" if not step.question else "", file=sys.stderr,
              flush=True)

    run = qa_runs.run_suite(ctx, rt, suite.id, progress=None if args.json or not sys.stderr.isatty() else progress)
    diff = qa_runs.diff_runs(ctx, rt.store, run.id)
    if args.json:
        _dump({"run": run.as_dict(), "diff": diff.as_dict()})
    else:
        _print_run(run, diff)
    return 0 if run.passed == run.total else 1


def cmd_qa(args, runtime, context) -> int:
    try:
        return _qa(args, runtime, context)
    except UserError as exc:  # an import error lists every bad line
        print(f"error: {exc}", file=sys.stderr)
        return 2


def register(add) -> None:
    """Add the QA subcommand through ``add(name, func, help)`` of the CLI."""
    p = add("qa", cmd_qa, "QA suites: qa suites SLUG | qa import SLUG SUITE FILE.jsonl [--replace] | "
                          "qa export SLUG SUITE | qa run SLUG SUITE (exit 1 when a case fails)")
    p.add_argument("words", nargs="+", metavar="action SLUG [SUITE [FILE]]")
    p.add_argument("--replace", action="store_true", help="import: replace the suite's cases instead of adding")
