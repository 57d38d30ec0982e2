"""Concurrent visitors against the real public endpoint: errors, cut streams, the server's own latency, memory.

    python -m bench load [--users 50] [--seconds 60] [--json]

Starts ``python -m bench.load_server`` (the real app over the demo tenant, loopback only, a paced provider
whose time is known) as a subprocess, warms it up (every question once, then ``--warmup-rounds`` questions
per user; not counted), reads the server's RSS, then runs ``--users`` concurrent virtual users for
``--seconds``: each loops POST /v1/chat with a question from a fixed list (covered and uncovered demo
questions), reading the server-sent events to the end. The server is always stopped at the end.

Per request: errors (HTTP status >= 400, exceptions, an ``error`` event), unterminated streams (no ``done``),
time to the first ``text`` event (TTFT, the answer being released whole after the gate), ``done.usage.
provider_ms`` (the agent loop's own measure around provider calls) and ``output_tokens`` (the paced
provider's tokens: its nominal time is ``output_tokens x ms_per_token``). Overhead = TTFT - provider_ms:
the server's own time (retrieval, gate, database, queueing, streaming); ``overhead_vs_nominal`` = TTFT -
nominal provider time, which also charges the server for sleeps that woke late (GIL, a busy CPU).

Targets: 0 errors, 0 unterminated, overhead p95 <= 250 ms, RSS growth <= 50 MB.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.load_server import DEFAULT_DATA_DIR, SCRATCH_PREFIX, UNCOVERED

HOST = "127.0.0.1"  # loopback only: the benchmark never listens on or calls another address
TARGETS = {"errors": 0, "unterminated": 0, "overhead_p95_ms": 250.0, "rss_growth_mb": 50.0}
REQUEST_TIMEOUT = 60.0
MAX_USERS, MAX_SECONDS = 1000, 3600  # bounded: one machine, one loopback server
READY_TIMEOUT = 900.0  # the first run trains the demo tenant (about a minute, more on a busy machine)
SEED = 0

#: demo-tenant questions: covered (data/sample/kb: envíos, devoluciones, Lumen Care, horarios, pagos,
#: warranty) and a few the material does not cover (they abstain and record a gap)
COVERED = (
    "¿Cuánto tarda un envío a Canarias?",
    "¿Cuánto cuesta el envío de una bicicleta completa?",
    "¿Enviáis a Portugal?",
    "¿A qué hora tengo que pedir para que salga el mismo día?",
    "¿Cuántos días tengo para devolver un producto?",
    "¿Cuánto cuesta devolver un pedido desde Baleares?",
    "¿Cuándo recibo el reembolso de una devolución?",
    "¿Puedo devolver una bicicleta eléctrica?",
    "¿Cuánto cuesta al mes el plan Pro de Lumen Care?",
    "¿Qué incluye el plan Básico de Lumen Care?",
    "¿Cómo cancelo mi suscripción de Lumen Care?",
    "¿Qué horario tiene la tienda de Madrid?",
    "¿Abrís los domingos en Barcelona?",
    "¿Cuál es el teléfono de atención al cliente?",
    "¿Puedo pagar a plazos?",
    "¿Qué métodos de pago aceptáis?",
    "How long is the warranty on the frame?",
)
QUESTIONS = COVERED + UNCOVERED


@dataclass
class Sample:
    at: float = 0.0  # perf_counter when sent
    status_code: int = 0
    error: str = ""
    done: dict | None = None
    ttft_ms: float | None = None
    total_ms: float = 0.0
    events: Counter = field(default_factory=Counter)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """VmRSS of a process, in MB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def stat(values: list[float], *names: str) -> dict:
    """Percentiles (and max) of millisecond values, rounded."""
    if not values:
        return {name: None for name in names}
    arr = np.asarray(values, dtype=float)
    out = {}
    for name in names:
        out[name] = round(float(arr.max() if name == "max" else np.percentile(arr, int(name[1:]))), 1)
    return out


class Server:
    """The load server as a subprocess; stopped (SIGTERM, then SIGKILL) by ``stop``, also on errors."""

    def __init__(self, users: int, ms_per_token: float, data_dir: Path, scratch: bool, stages: bool = False):
        self.port = free_port()
        cmd = [sys.executable, "-m", "bench.load_server", "--port", str(self.port), "--data-dir", str(data_dir),
               "--users", str(users), "--ms-per-token", str(ms_per_token)]
        cmd += (["--scratch"] if scratch else []) + (["--stages"] if stages else [])
        root = Path(__file__).resolve().parent.parent
        self.proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=None, text=True,
                                     start_new_session=True)  # its own group: Ctrl-C here is handled by us
        self.info: dict = {}
        self._line: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if not self._line:
                self._line.append(line)

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the load server exited with code {self.proc.returncode} before it was ready")
            if self._line:
                try:
                    if httpx.get(f"{self.base}/v1/health", timeout=2, trust_env=False).status_code == 200:
                        self.info = json.loads(self._line[0])
                        return
                except httpx.HTTPError:
                    pass
            time.sleep(0.2)
        raise RuntimeError(f"the load server was not ready after {timeout:.0f} s")

    def rss_mb(self) -> float:
        return rss_mb(self.proc.pid)

    def stats(self, reset: bool = False) -> dict:
        import httpx

        if reset:
            httpx.post(f"{self.base}/bench/stats/reset", timeout=30, trust_env=False).raise_for_status()
            return {}
        return httpx.get(f"{self.base}/bench/stats", timeout=30, trust_env=False).json()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        served = Path(self.info.get("data_dir", "")) if self.info else None
        if served and served.parent.name.startswith(SCRATCH_PREFIX):  # the server's own clean-up, if it was killed
            shutil.rmtree(served.parent, ignore_errors=True)


async def one_request(client, key: str, question: str) -> Sample:
    """POST /v1/chat and read the event stream to its end."""
    started = time.perf_counter()
    sample = Sample(at=started)
    name, data = "message", []
    try:
        async with client.stream("POST", "/v1/chat", json={"message": question},
                                 headers={"X-Site-Key": key}) as response:
            sample.status_code = response.status_code
            if response.status_code >= 400:
                await response.aread()
                sample.error = f"http {response.status_code}"
                return sample
            async for line in response.aiter_lines():
                if line:
                    if line.startswith(":"):
                        continue
                    field_name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field_name == "event":
                        name = value
                    elif field_name == "data":
                        data.append(value)
                    continue
                if data:  # a blank line ends an event
                    payload = json.loads("\n".join(data))
                    sample.events[name] += 1
                    if name == "text" and sample.ttft_ms is None:
                        sample.ttft_ms = (time.perf_counter() - started) * 1000
                    elif name == "error":
                        sample.error = f"error event: {payload.get('code')}"
                    elif name == "done":
                        sample.done = payload
                name, data = "message", []
    except Exception as exc:  # a load test counts failures, it does not stop at the first
        sample.error = f"{exc.__class__.__name__}: {exc}"[:200]
    finally:
        sample.total_ms = (time.perf_counter() - started) * 1000
    return sample


async def drive(base: str, key: str, users: int, seconds: float, rounds: int | None, seed: int,
                unique: bool = False) -> tuple[list[Sample], float]:
    """``users`` virtual users, each asking in a loop until ``seconds`` pass (or for ``rounds`` questions).
    ``unique``: every question gets a suffix never sent before (" #<run>-<n>"), so no query vector is cached."""
    import httpx

    limits = httpx.Limits(max_connections=users, max_keepalive_connections=users)
    timeout = httpx.Timeout(REQUEST_TIMEOUT, connect=10.0)
    samples: list[Sample] = []
    run_id, sent = f"{time.time_ns() % 10**9:x}", [0]
    started = time.perf_counter()
    deadline = started + seconds

    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=timeout, trust_env=False) as client:
        async def user(n: int) -> None:
            rng = random.Random(seed * 1000 + n)
            done = 0
            while (rounds is None and time.perf_counter() < deadline) or (rounds is not None and done < rounds):
                question = rng.choice(QUESTIONS)
                if unique:
                    sent[0] += 1
                    question = f"{question} #{run_id}-{sent[0]}"
                samples.append(await one_request(client, key, question))
                done += 1

        await asyncio.gather(*(user(n) for n in range(users)))
    return samples, time.perf_counter() - started


async def ask_each(base: str, key: str, users: int, questions) -> list[Sample]:
    """Every question once, at most ``users`` at a time (the warm-up's first pass: each question's first use
    pays one-off costs, e.g. embedding the query, loading the PII engine, that a measured run should not)."""
    import httpx

    limits = httpx.Limits(max_connections=users, max_keepalive_connections=users)
    gate = asyncio.Semaphore(users)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=httpx.Timeout(REQUEST_TIMEOUT, connect=10.0),
                                 trust_env=False) as client:
        async def one(question: str) -> Sample:
            async with gate:
                return await one_request(client, key, question)

        return list(await asyncio.gather(*(one(q) for q in questions)))


def summarize(samples: list[Sample], elapsed: float, ms_per_token: float, origin: float = 0.0) -> dict:
    errors = [s for s in samples if s.error]
    unterminated = [s for s in samples if not s.error and s.done is None]
    statuses = Counter((s.done or {}).get("status", "none") for s in samples)
    ttft, provider, overhead, strict, total = [], [], [], [], []
    for s in samples:
        if s.done is None or s.error:
            continue
        total.append(s.total_ms)
        usage = s.done.get("usage") or {}
        provider_ms = usage.get("provider_ms")
        if s.ttft_ms is None or provider_ms is None:
            continue
        ttft.append(s.ttft_ms)
        provider.append(float(provider_ms))
        overhead.append(s.ttft_ms - provider_ms)
        strict.append(s.ttft_ms - usage.get("output_tokens", 0) * ms_per_token)
    return {
        "requests": len(samples), "errors": len(errors), "unterminated": len(unterminated),
        "error_kinds": dict(Counter(s.error.split(":")[0] for s in errors)),
        "first_errors": [{"at_s": round(s.at - origin, 2), "after_ms": round(s.total_ms, 1), "status": s.status_code,
                          "error": s.error, "events": dict(s.events)} for s in errors[:5]],
        "statuses": dict(statuses),
        "ttft_ms": stat(ttft, "p50", "p95"),
        "provider_ms": stat(provider, "p50", "p95"),
        "overhead_ms": stat(overhead, "p50", "p95", "max"),
        "overhead_vs_nominal_ms": stat(strict, "p50", "p95", "max"),
        "stream_total_ms": stat(total, "p50", "p95"),
        "throughput_rps": round(len(samples) / elapsed, 2) if elapsed else None,
    }


def code_version() -> str:
    """The commit measured (``+dirty`` when the work tree has changes), or "" outside git."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True,
                               text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{head}+dirty" if head and dirty else head


def run(users: int = 50, seconds: float = 60.0, warmup_rounds: int = 2, ms_per_token: float = 20.0,
        data_dir: Path = DEFAULT_DATA_DIR, scratch: bool = True, stages: bool = False, unique: bool = False) -> dict:
    import resource

    if not (1 <= users <= MAX_USERS and 0 < seconds <= MAX_SECONDS and 0 <= warmup_rounds <= 100):
        raise ValueError(f"--users must be 1..{MAX_USERS}, --seconds in (0, {MAX_SECONDS}], --warmup-rounds 0..100")

    def interrupted(*_):
        raise KeyboardInterrupt

    previous = (signal.signal(signal.SIGTERM, interrupted)
                if threading.current_thread() is threading.main_thread() else None)
    server = Server(users, ms_per_token, data_dir, scratch, stages)
    try:
        server.wait_ready()
        key = server.info["site_key"]
        warm_started = time.perf_counter()
        warm = [] if unique else asyncio.run(ask_each(server.base, key, users, QUESTIONS))
        warm += asyncio.run(drive(server.base, key, users, 0, warmup_rounds, SEED + 1, unique))[0]
        warm_elapsed = time.perf_counter() - warm_started
        server.stats(reset=True)
        rss_start = server.rss_mb()
        before = server.stats()["process"]
        client_before = resource.getrusage(resource.RUSAGE_SELF)
        origin = time.perf_counter()
        samples, elapsed = asyncio.run(drive(server.base, key, users, seconds, None, SEED, unique))
        client_after = resource.getrusage(resource.RUSAGE_SELF)
        rss_end = server.rss_mb()
        stats = server.stats()
    finally:
        server.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    after = stats["process"]
    server_cpu = after["cpu_user_s"] + after["cpu_system_s"] - before["cpu_user_s"] - before["cpu_system_s"]
    client_cpu = (client_after.ru_utime + client_after.ru_stime) - (client_before.ru_utime + client_before.ru_stime)
    report = {"users": users, "seconds": seconds, "commit": code_version(), "ms_per_token": ms_per_token,
              "questions": len(QUESTIONS), "unique_questions": unique,
              "warmup": {"requests": len(warm), "errors": sum(bool(s.error) for s in warm),
                         "seconds": round(warm_elapsed, 1)},
              **summarize(samples, elapsed, ms_per_token, origin),
              "elapsed_s": round(elapsed, 1),
              "rss_start_mb": round(rss_start, 1), "rss_end_mb": round(rss_end, 1),
              "rss_growth_mb": round(rss_end - rss_start, 1),
              "paced_provider": {k: round(v, 3) if isinstance(v, float) else v
                                 for k, v in stats["paced_provider"].items()},
              "cpu": {"server_s": round(server_cpu, 1), "server_cores": round(server_cpu / elapsed, 2),
                      "server_ms_per_request": round(server_cpu * 1000 / max(len(samples), 1), 1),
                      "server_event_loop_thread_s": round(after["loop_thread_cpu_s"] - before["loop_thread_cpu_s"], 1),
                      "client_s": round(client_cpu, 1), "client_cores": round(client_cpu / elapsed, 2),
                      "server_threads": after["threads"], "machine_cpus": os.cpu_count()},
              "event_loop_lag_ms": stats["loop"],
              "targets": TARGETS}
    if stages:
        report["stages"] = stats["stages"]
    checks = {"errors": report["errors"] == 0, "unterminated": report["unterminated"] == 0,
              "overhead_p95": report["overhead_ms"]["p95"] is not None
              and report["overhead_ms"]["p95"] <= TARGETS["overhead_p95_ms"],
              "rss_growth": report["rss_growth_mb"] <= TARGETS["rss_growth_mb"]}
    report["checks"] = checks
    report["pass"] = all(checks.values())
    return report


def table(report: dict) -> str:
    """The report as a readable table."""
    def ms(d: dict) -> str:
        return " / ".join(f"{k} {v}" for k, v in d.items())

    rows = [
        ("users x seconds", f"{report['users']} x {report['seconds']:g} s ({report['cpu']['machine_cpus']} CPUs)"),
        ("requests", f"{report['requests']} ({report['throughput_rps']} req/s)"),
        ("errors / unterminated", f"{report['errors']} / {report['unterminated']}"),
        ("statuses", ", ".join(f"{k} {v}" for k, v in sorted(report["statuses"].items()))),
        ("TTFT ms", ms(report["ttft_ms"])),
        ("provider ms", ms(report["provider_ms"])),
        ("overhead ms (TTFT - provider)", ms(report["overhead_ms"])),
        ("overhead vs nominal ms", ms(report["overhead_vs_nominal_ms"])),
        ("RSS MB start / end / growth",
         f"{report['rss_start_mb']} / {report['rss_end_mb']} / {report['rss_growth_mb']}"),
        ("server CPU", f"{report['cpu']['server_cores']} cores, {report['cpu']['server_ms_per_request']} ms/request"),
        ("event loop lag ms", ms({k: v for k, v in (report["event_loop_lag_ms"] or {}).items() if k.endswith("_ms")})),
    ]
    for name, st in (report.get("stages") or {}).items():
        rows.append((f"  stage {name}", f"n {st['n']}  p50 {st['p50_ms']}  p95 {st['p95_ms']}  max {st['max_ms']}"))
    width = max(len(r[0]) for r in rows)
    lines = [f"{label:<{width}}  {value}" for label, value in rows]
    lines += ["", "checks: " + ", ".join(f"{k} {'ok' if v else 'FAIL'}" for k, v in report["checks"].items()),
              "PASS" if report["pass"] else "FAIL"]
    return "\n".join(lines)
