"""``python -m bench chaos``: several real processes on one data dir, as the default deployment runs them (#16).

Everything goes through the README's commands (``python -m core ...``, ``python -m api``) on a throw-away data dir
with the demo tenant plus a generated catalog (so that a full retrain takes a while), the real embedder:

- ``searches_during_full_retrain``: a ``search --batch`` process runs while another process retrains ``--full``
  over and over; every search must answer, and with the same first hit as before the retrain.
- ``two_trainings``: two ``train --full`` started together; neither may crash (the second waits for the first).
- ``api_burst_while_ingesting``: a bounded burst of chats against a running ``python -m api`` while the CLI ingests
  and trains a new document; every chat must end with ``done`` and no turn may fail its knowledge search; after
  the training, the endpoint answers from the new document.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ["¿Cuánto tarda un envío a Canarias?", "How long is the warranty on the frame?", "¿Puedo pagar a plazos?",
           "horario de la tienda de Madrid", "¿Cuánto cuesta Lumen Care Pro?", "¿Cómo devuelvo un pedido?"]
RENTAL = "# Alquiler de bicicletas\n\nEl alquiler de una bicicleta de montaña cuesta 35 € al día, con casco incluido.\n"
RENTAL_QUESTION = "¿Cuánto cuesta alquilar una bicicleta de montaña al día?"


def _cli(env: dict, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "core", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    if check and done.returncode:
        raise RuntimeError(f"python -m core {' '.join(argv)} failed: {done.stderr[-2000:]}")
    return done


def _catalog(folder: Path, n: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"ref-{i:03d}.md").write_text(
            f"# Recambio R-{i:03d}\n\nEl recambio R-{i:03d} pesa {100 + i} gramos y encaja en los cuadros de la serie "
            f"{i % 9 + 1}. Se entrega en {i % 5 + 2} días laborables.\n", encoding="utf-8")


def _first_paths(stdout: str) -> dict[str, str | None]:
    out = {}
    for line in stdout.splitlines():
        item = json.loads(line)
        out[item["id"]] = item["results"][0]["path"] if item["results"] else None
    return out


def searches_during_full_retrain(env: dict, work: Path, rounds: int) -> dict:
    batch = work / "queries.jsonl"
    batch.write_text("".join(json.dumps({"id": f"{r}:{q}", "query": q}) + "\n"
                             for r in range(rounds) for q in QUERIES), encoding="utf-8")
    before = _first_paths(_cli(env, "search", "demo", "--batch", str(work / "once.jsonl")).stdout)
    searcher = subprocess.Popen([sys.executable, "-m", "core", "search", "demo", "--batch", str(batch)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    retrains, retrain_failures = 0, 0
    output: dict = {}
    reader = threading.Thread(target=lambda: output.update(zip(("out", "err"), searcher.communicate())))
    reader.start()
    while searcher.poll() is None:
        retrains += 1
        retrain_failures += _cli(env, "train", "demo", "--full", "--json", check=False).returncode != 0
    reader.join()
    answered = _first_paths(output["out"])
    wrong = sum(1 for key, path in answered.items() if path != before[key.split(":", 1)[1]])
    return {"searches": len(batch.read_text().splitlines()), "answered": len(answered),
            "failed": len(batch.read_text().splitlines()) - len(answered), "first_hit_changed": wrong,
            "full_retrains_meanwhile": retrains, "retrain_failures": retrain_failures,
            "searcher_exit": searcher.returncode, "searcher_error": output["err"].strip()[-500:]}


def two_trainings(env: dict) -> dict:
    procs = [subprocess.Popen([sys.executable, "-m", "core", "train", "demo", "--full", "--json"], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate() for p in procs]
    crashes = [err.strip()[-500:] for p, (_out, err) in zip(procs, results) if p.returncode != 0]
    return {"trainings": 2, "crashes": len(crashes), "errors": crashes,
            "waited": sum("waiting up to" in err for _out, err in results)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chat(client: httpx.Client, base: str, key: str, question: str) -> dict:
    try:
        reply = client.post(f"{base}/v1/chat", json={"message": question}, headers={"X-Site-Key": key})
    except httpx.HTTPError as exc:
        return {"http": 0, "error": type(exc).__name__}
    done = [line for line in reply.text.splitlines() if line.startswith("data:")]
    status = json.loads(done[-1].split(":", 1)[1]).get("status") if done and "event: done" in reply.text else None
    return {"http": reply.status_code, "status": status, "text": reply.text}


def _start_api(env: dict) -> tuple[subprocess.Popen, str]:
    api = subprocess.Popen([sys.executable, "-m", "api"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{env['COBERTURA_API_PORT']}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/v1/health", timeout=1).status_code == 200:
                return api, base
        except httpx.HTTPError:
            time.sleep(0.2)
    api.terminate()
    raise RuntimeError("python -m api did not start within 120 s")


def api_burst_while_ingesting(env: dict, work: Path, chats: int, concurrency: int) -> dict:
    from core.base.store import Store
    from core.tenancy import site_keys
    from core.tenancy.context import local_operator

    store = Store(Path(env["COBERTURA_DATA_DIR"]) / "cobertura.db")
    key = site_keys.ensure(local_operator(store, "demo"), store).public_key
    store.close()
    api, base = _start_api(env)
    try:
        (work / "alquiler.md").write_text(RENTAL, encoding="utf-8")
        ingest = threading.Thread(target=lambda: (_cli(env, "ingest", "demo", str(work / "alquiler.md"), "--prefix",
                                                       "servicios"), _cli(env, "train", "demo")))
        with httpx.Client(timeout=120) as client, ThreadPoolExecutor(concurrency) as pool:
            ingest.start()
            replies = list(pool.map(lambda i: _chat(client, base, key, QUERIES[i % len(QUERIES)]), range(chats)))
            ingest.join()
            after = _chat(client, base, key, RENTAL_QUESTION)
    finally:
        api.terminate()
        api.wait(timeout=30)
    failed = [r for r in replies if r["http"] != 200 or r["status"] in (None, "error")]
    return {"chats": chats, "concurrency": concurrency, "failed": len(failed),
            "tools_failed": sum("tools_failed" in r.get("text", "") for r in replies),
            "statuses": {s: sum(r["status"] == s for r in replies) for s in {r["status"] for r in replies}},
            "new_document_answered_after_training": after.get("status") == "answered" and "35 €" in after["text"]}


def run(catalog: int = 200, rounds: int = 60, chats: int = 120, concurrency: int = 8) -> dict:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cobertura-chaos-") as scratch:
        work = Path(scratch)
        env = {**os.environ, "COBERTURA_DATA_DIR": str(work / "data"), "COBERTURA_API_PORT": str(_free_port()),
               "COBERTURA_RATE_PER_IP": "100000", "COBERTURA_RATE_PER_KEY": "100000"}
        _cli(env, "init")
        _catalog(work / "recambios", catalog)
        _cli(env, "ingest", "demo", str(work / "recambios"))
        _cli(env, "train", "demo")
        (work / "once.jsonl").write_text("".join(json.dumps({"id": q, "query": q}) + "\n" for q in QUERIES),
                                         encoding="utf-8")
        report = {"catalog_sources": catalog,
                  "searches_during_full_retrain": searches_during_full_retrain(env, work, rounds),
                  "two_trainings": two_trainings(env),
                  "api_burst_while_ingesting": api_burst_while_ingesting(env, work, chats, concurrency)}
    s, t, b = (report["searches_during_full_retrain"], report["two_trainings"], report["api_burst_while_ingesting"])
    report["pass"] = (s["failed"] == 0 and s["searches"] >= 300 and s["full_retrains_meanwhile"] >= 1
                      and t["crashes"] == 0 and b["failed"] == 0 and b["tools_failed"] == 0
                      and b["new_document_answered_after_training"])
    report["seconds"] = round(time.monotonic() - started, 1)
    return report


def register(sub, argv: list[str] | None) -> None:
    """Add ``chaos`` to ``python -m bench``; when it is the command, run it here, print JSON and exit."""
    p = sub.add_parser("chaos", help="several processes on one data dir: searches during a full retrain, two "
                                     "trainings at once, the API under a burst while the CLI ingests")
    p.add_argument("--catalog", type=int, default=200, help="generated sources added to the demo")
    p.add_argument("--rounds", type=int, default=60, help="times the searcher asks each of the 6 queries")
    p.add_argument("--chats", type=int, default=120)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--json", action="store_true", help="(output is always JSON)")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["chaos"]:
        return
    args = p.parse_args(argv[1:])
    report = run(args.catalog, args.rounds, args.chats, args.concurrency)
    json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
    print()
    raise SystemExit(0 if report["pass"] else 1)
