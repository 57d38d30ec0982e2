"""Real servers the tests start as processes (``python -m api``, ``chroma run``): a free loopback port, and the
wait until one answers its health URL."""
from __future__ import annotations

import socket
import subprocess
import time

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
