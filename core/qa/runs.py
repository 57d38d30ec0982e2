"""QA suite runs (Q2): each case asked as a rehearsal, the results stored, and the diff against the last run.

A run never records a conversation, a gap or a handoff (see ``core.channels.turn.Turns.rehearse``)."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from core.base.progress import Estimate, duration
from core.base.store import Store
from core.channels.turn import Rehearsal, Turns
from core.qa import records
from core.qa.cases import Case, QaError, describe, evaluate
from core.qa.suites import list_cases, require_suite, suite_name
from core.tenancy.context import TenantContext


@dataclass
class CaseResult:
    case_id: int
    position: int
    case: dict  # the case as it was when it ran (its JSONL line)
    status: str  # the agent's status on the last question
    passed: bool
    detail: str  # why it failed ("" when it passed)
    answer: str
    citations: list[dict] = field(default_factory=list)  # [{id, path}]
    steps: list[dict] = field(default_factory=list)  # the prefix turns: [{question, status}]
    latency_ms: int = 0

    @property
    def number(self) -> int:
        """The case's number in its suite when it ran (``case_id`` is its global id)."""
        return self.position

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(c["path"] for c in self.citations))

    @property
    def chunk_ids(self) -> list[str]:
        return [c["id"] for c in self.citations]

    def as_dict(self) -> dict:
        return {**asdict(self), "number": self.number, "paths": self.paths, "chunk_ids": self.chunk_ids,
                "expectation": describe(self.case)}


@dataclass
class Run:
    id: int
    suite_id: int
    suite: str
    started_at: str
    finished_at: str
    actor: str
    provider: str
    total: int
    passed: int
    results: list[CaseResult] = field(default_factory=list)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.total if self.total else None

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    def as_dict(self) -> dict:
        return {"id": self.id, "suite_id": self.suite_id, "suite": self.suite, "started_at": self.started_at,
                "finished_at": self.finished_at, "actor": self.actor, "provider": self.provider, "total": self.total,
                "passed": self.passed, "pass_rate": self.pass_rate, "results": [r.as_dict() for r in self.results]}


@dataclass(frozen=True)
class RunProgress:
    """How far a run has got: reported before each case is asked and once all are done."""

    done: int
    total: int
    passed: int
    question: str  # the case being asked ('' once every case is done)
    last: CaseResult | None  # the case that just ended
    elapsed: float  # seconds since the run started
    seconds_left: float | None  # at the pace of the cases done so far; None before the first ends

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    def describe(self) -> str:
        """One line for people: 'Case 3/10 · 1 passed, 1 failed · about 40 s left · asking: ¿…?'."""
        tally = f"{self.passed} passed, {self.done - self.passed} failed"
        if not self.question:
            return f"{self.done}/{self.total} case(s) run · {tally}"
        left = f" · {duration(self.seconds_left)} left" if self.seconds_left is not None else ""
        return f"Case {self.done + 1}/{self.total} · {tally}{left} · asking: {self.question[:80]}"


@dataclass
class RunDiff:
    """What changed between a run and an earlier run of the same suite (cases matched by id; each entry also has
    the case's ``number`` in its suite, which people see)."""

    run_id: int
    previous_id: int | None
    changed: list[dict] = field(default_factory=list)  # pass/fail flipped: {case_id, question, before, after}
    # cited chunk ids changed: {case_id, question, before, after, added, removed}
    cited: list[dict] = field(default_factory=list)
    new: list[dict] = field(default_factory=list)  # cases the earlier run did not have: {case_id, question, passed}
    gone: list[dict] = field(default_factory=list)  # cases of the earlier run that are no longer in the suite

    @property
    def empty(self) -> bool:
        return not (self.changed or self.cited or self.new or self.gone)

    def as_dict(self) -> dict:
        return asdict(self)



# -- runs --------------------------------------------------------------------------------------------------
def run_case(ctx: TenantContext, turns: Turns, agent, case: Case) -> CaseResult:
    """Ask a case (its prefix, then its question) in one rehearsal conversation and judge the last answer.

    Nothing is written: the rehearsal keeps the conversation in memory (see ``core.channels.turn.Rehearsal``)."""
    rehearsal = Rehearsal(channel=case.channel)
    steps = []
    for message in case.prefix:
        turn = turns.rehearse(ctx, agent, rehearsal, message)
        steps.append({"question": message, "status": str(turn.status)})
    started = time.monotonic()
    final = turns.rehearse(ctx, agent, rehearsal, case.question)
    latency = final.trace.latency_ms if final.trace else None
    citations = [{"id": c["id"], "path": c["path"]} for c in final.citations]
    passed, detail = evaluate(case, str(final.status), citations, final.trace.as_dict() if final.trace else {},
                              final.answer)
    return CaseResult(case.id, case.position, case.line(), str(final.status), passed, detail, final.answer, citations,
                      steps, int(latency if latency is not None else (time.monotonic() - started) * 1000))


def run_suite(ctx: TenantContext, rt, suite_id: int | str, *, agent=None,
              progress: Callable[[RunProgress], None] | None = None) -> Run:
    """Run every case of a suite and store the run; ``progress`` gets a :class:`RunProgress` before each case
    and once all are done.

    The agent defaults to the tenant's (``make_agent(rt, ctx=ctx)``: its settings and provider chain)."""
    suite = require_suite(ctx, rt.store, suite_id)
    todo = list_cases(ctx, rt.store, suite.id)
    if not todo:
        raise QaError(f"Suite '{suite.name}' has no cases yet; add some or import a JSONL file.")
    if agent is None:
        from core.agent.factory import make_agent

        agent = make_agent(rt, ctx=ctx)
    started = rt.store.clock.stamp()
    results: list[CaseResult] = []
    providers: dict[str, None] = {}
    estimate = Estimate(rt.store.clock, len(todo))

    def report(question: str) -> None:
        if progress is not None:
            progress(RunProgress(len(results), len(todo), sum(r.passed for r in results), question,
                                 results[-1] if results else None, estimate.elapsed(), estimate.left(len(results))))

    for case in todo:
        report(case.question)
        result = run_case(ctx, rt.turns, agent, case)
        results.append(result)
        provider = getattr(agent.provider, "name", "")
        providers.setdefault(provider, None)
    report("")
    passed = sum(r.passed for r in results)
    with rt.store.write():
        require_suite(ctx, rt.store, suite.id)  # not deleted meanwhile
        run_id = records.add_run(ctx, rt.store, suite.id, started_at=started, finished_at=rt.store.clock.stamp(),
                                 provider=", ".join(p for p in providers if p), total=len(results), passed=passed,
                                 results=[asdict(r) for r in results])
    return get_run(ctx, rt.store, run_id)


def get_run(ctx: TenantContext, store: Store, run_id: int) -> Run:
    """A run with its results (an unknown or foreign run raises like a missing one)."""
    row = records.run(ctx, store, run_id)
    name = suite_name(ctx, store, row["suite_id"]) if row else None
    if row is None or name is None:  # a run is shown only with its suite
        raise QaError(f"No QA run #{run_id} in '{ctx.tenant_slug}'.")
    run = Run(**row, suite=name)
    run.results.extend(CaseResult(**result) for result in records.results(ctx, store, run.id))
    return run


def list_runs(ctx: TenantContext, store: Store, suite_id: int | str, limit: int = 20) -> list[Run]:
    """The suite's latest runs, newest first (without their results)."""
    suite = require_suite(ctx, store, suite_id)
    return [Run(**row, suite=suite.name) for row in records.runs_of(ctx, store, suite.id, limit)]


def previous_run_id(ctx: TenantContext, store: Store, run_id: int) -> int | None:
    """The run of the same suite just before ``run_id``, if any."""
    run = get_run(ctx, store, run_id)
    return records.previous_run_id(ctx, store, run.suite_id, run.id)


def diff_runs(ctx: TenantContext, store: Store, run_id: int, previous_id: int | None = None) -> RunDiff:
    """Compare a run with an earlier run of its suite (default: the one just before it). Cases are matched by
    id: which flipped between pass and fail, which now cite other chunks, which are new or gone."""
    run = get_run(ctx, store, run_id)
    previous_id = previous_id if previous_id is not None else previous_run_id(ctx, store, run.id)
    diff = RunDiff(run.id, previous_id)
    if previous_id is None:
        return diff
    before = get_run(ctx, store, previous_id)
    if before.suite_id != run.suite_id:
        raise QaError(f"Run #{previous_id} belongs to another suite; compare runs of the same suite.")
    old = {r.case_id: r for r in before.results}
    new = {r.case_id: r for r in run.results}
    for case_id, now in new.items():
        was = old.get(case_id)
        question = now.case["question"]
        if was is None:
            diff.new.append({"case_id": case_id, "number": now.number, "question": question, "passed": now.passed})
            continue
        if was.passed != now.passed:
            diff.changed.append({"case_id": case_id, "number": now.number, "question": question, "before": was.passed,
                                 "after": now.passed, "detail": now.detail})
        if set(was.chunk_ids) != set(now.chunk_ids):
            paths = {c["id"]: c["path"] for c in was.citations + now.citations}
            added = [i for i in now.chunk_ids if i not in was.chunk_ids]
            removed = [i for i in was.chunk_ids if i not in now.chunk_ids]
            diff.cited.append({"case_id": case_id, "number": now.number, "question": question, "before": was.chunk_ids,
                               "after": now.chunk_ids, "added": [{"id": i, "path": paths[i]} for i in added],
                               "removed": [{"id": i, "path": paths[i]} for i in removed]})
    diff.gone = [{"case_id": case_id, "number": was.number, "question": was.case["question"], "passed": was.passed}
                 for case_id, was in old.items() if case_id not in new]
    return diff
