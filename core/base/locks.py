"""Locks between the processes that share one data directory (the admin app, ``python -m api``, the CLI).

``flock`` locks on files under ``<data dir>/locks``: the kernel releases them when a process dies, so a crash never
leaves a stale lock behind. Each acquisition opens its own file description, so two threads of one process exclude
each other exactly like two processes do. A holder of an exclusive lock writes who it is into the file, which lets
a waiter say "held since ... by process ...".
"""
from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from core.base.clock import SYSTEM
from core.base.errors import UserError

POLL_SECONDS = 0.02


class LockBusy(UserError):
    """A lock stayed held by another process or thread for longer than the caller was willing to wait."""

    def __init__(self, message: str, holder: dict | None):
        super().__init__(message)
        self.holder = holder


class FileLock:
    """A named lock: ``shared()`` for many readers at once, ``exclusive()`` for one writer."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def holder(self) -> dict | None:
        """Who holds (or last held) the exclusive lock: ``{pid, since, what}``; None when never written."""
        try:
            return json.loads(self.path.read_text(encoding="utf-8") or "null")
        except (OSError, ValueError):
            return None

    @contextmanager
    def shared(self, timeout: float) -> Iterator[None]:
        with self._held(fcntl.LOCK_SH, timeout, what=""):
            yield

    @contextmanager
    def exclusive(self, timeout: float, what: str = "") -> Iterator[None]:
        with self._held(fcntl.LOCK_EX, timeout, what):
            yield

    @contextmanager
    def _held(self, mode: int, timeout: float, what: str) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self._acquire(fd, mode, timeout)
            if mode == fcntl.LOCK_EX and what:
                since = SYSTEM.stamp()
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps({"pid": os.getpid(), "since": since, "what": what}).encode(), 0)
            yield
        finally:
            os.close(fd)  # closing the description releases the lock

    def _acquire(self, fd: int, mode: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self.holder()
                    raise LockBusy(busy_message(self.path.stem, holder, timeout), holder) from None
                time.sleep(POLL_SECONDS)


def busy_message(name: str, holder: dict | None, waited: float) -> str:
    who = f" ({holder['what']}, process {holder['pid']}, since {holder['since']})" if holder and holder.get("what") \
        else ""
    return f"'{name}' is held by another process{who}; waited {waited:g} s. Try again when it is done."


class Counter:
    """An integer in a file, bumped by a holder of an exclusive lock and read under a shared one."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> int:
        try:
            return int(self.path.read_text(encoding="ascii").strip() or 0)
        except FileNotFoundError:
            return 0

    def bump(self) -> int:
        value = self.read() + 1
        staging = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        staging.write_text(str(value), encoding="ascii")
        os.replace(staging, self.path)  # atomic: a reader sees the old value or the new one
        return value


class ReadWrite:
    """Within one process: many readers, or one writer (which waits for the readers to leave)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing and not self._readers)
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()
