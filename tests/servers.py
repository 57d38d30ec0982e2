"""Real servers the tests start: processes (``python -m api``, ``streamlit run app.py``, ``chroma run``) on a free
loopback port, the wait until one answers, and an ASGI app behind uvicorn in a thread of the test process."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A loopback port the OS says is free now; a server binds it a moment later (a process: seconds later).

    Under xdist (pytest.ini) each worker takes only ports of its own share, so two workers never pick the same
    port in that moment: one would start its server, the other's would not bind, and its test would talk to the
    first one (or find "nothing listens" answered). The ports tried meanwhile stay bound, so the OS offers others."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    mine = int(worker[2:]) % workers if worker[2:].isdigit() else 0
    tried: list[socket.socket] = []
    try:
        while True:
            s = socket.socket()
            tried.append(s)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            if _share(port, workers) == mine:
                return port
    finally:
        for s in tried:
            s.close()


def _share(port: int, workers: int) -> int:
    """Which worker's share ``port`` is in: a hash, as Linux prefers even ports for bind(0)."""
    return (port * 2654435761 >> 16) % workers


def wait_until_up(proc: subprocess.Popen, url: str, seconds: float, what: str) -> None:
    """Poll ``url`` until it answers 200; fail the test if the process exits or ``seconds`` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, f"{what} did not start"
        time.sleep(0.1)


def answers(url: str) -> bool:
    """Whether ``url`` answers 200 now."""
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def listening(port: int) -> bool:
    """Whether something accepts connections on the loopback ``port`` now."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@contextmanager
def serving(args: list[str], env: dict, log_path: Path, ready: Callable[[], bool], timeout: float) -> Iterator[None]:
    """Run a server process (``python -m ...``) until the block ends; wait until ``ready()`` first. Its output goes to
    ``log_path``, shown when it does not start."""
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, env={**os.environ, **env}, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, f"{' '.join(args)} did not start:\n{log_path.read_text()}"
            time.sleep(0.5)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@contextmanager
def admin_app(data: Path) -> Iterator[str]:
    """`streamlit run app.py` on a free port over the data dir ``data``; yields its URL."""
    port = free_port()
    with serving(["streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port), "--server.headless", "true",
                  "--server.address", "127.0.0.1"], {"COBERTURA_DATA_DIR": str(data)}, data.parent / "streamlit.log",
                 lambda: listening(port), 120):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def public_api(data: Path) -> Iterator[str]:
    """`python -m api` on a free port over the data dir ``data`` (a fresh one: its first start trains the demo tenant
    with the real embedder); yields its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with serving(["api"], {"COBERTURA_DATA_DIR": str(data), "COBERTURA_API_PORT": str(port)}, data.parent / "api.log",
                 lambda: answers(f"{url}/v1/health"), 240):
        yield url


@contextmanager
def in_thread(app, seconds: float = 20) -> Iterator[str]:
    """The ASGI ``app`` behind uvicorn on a free loopback port, in a thread of this process; yields its URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + seconds
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
