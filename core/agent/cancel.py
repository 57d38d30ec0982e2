"""Cancelling a turn (A7): a client that goes away stops the turn at once: no further provider round or tool
call, and the model request in flight is abandoned (its client closed) instead of waited for."""
from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")
#: How often an in-flight provider call looks at a plain ``cancelled()`` hook (a CancelToken needs no polling).
CANCEL_POLL_SECONDS = 0.05


class Cancelled(Exception):
    """The client went away: the turn stops and nothing is recorded as an answer."""


def never() -> bool:
    """The default ``cancelled`` hook: a turn nobody can cancel (CLI, admin app)."""
    return False


class CancelToken:
    """A turn's cancel switch, shared between the request that may go away and the thread answering it.

    Calling it says whether the turn was cancelled (it is the ``cancelled`` hook of ``Agent.answer``);
    ``cancel()`` flips it and runs the callbacks registered for what is in flight (waking the wait for a
    provider call), so nothing has to poll it."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def __call__(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def while_running(self, callback: Callable[[], None]) -> _Registration:
        """``with token.while_running(abort): ...``: ``abort`` runs if the token is cancelled meanwhile."""
        return _Registration(self, callback)


class _Registration:
    def __init__(self, token: CancelToken, callback: Callable[[], None]) -> None:
        self.token, self.callback = token, callback

    def __enter__(self) -> None:
        with self.token._lock:
            if not self.token._event.is_set():
                self.token._callbacks.append(self.callback)
                return
        self.callback()  # cancelled already: drop it at once

    def __exit__(self, *exc) -> None:
        with self.token._lock:
            if self.callback in self.token._callbacks:
                self.token._callbacks.remove(self.callback)


def cancellable_call(call: Callable[[], T], cancelled: Callable[[], bool], abort: Callable[[], None]) -> T:
    """Run a blocking provider call that the turn's ``cancelled`` hook can interrupt.

    With ``never`` the call simply runs. Otherwise it runs in a helper thread and the turn stops waiting for it
    the moment it is cancelled: at once with a CancelToken (its ``cancel()`` wakes the wait), within
    CANCEL_POLL_SECONDS with a plain hook. ``abort`` then closes the provider's HTTP clients, so the abandoned
    request ends as soon as its connection notices; its answer, if one still comes, is thrown away."""
    if cancelled is never:
        return call()
    outcome: dict = {}
    finished = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finished.set()

    threading.Thread(target=run, name="provider-call", daemon=True).start()
    if isinstance(cancelled, CancelToken):
        with cancelled.while_running(finished.set):
            finished.wait()
    else:
        while not finished.wait(CANCEL_POLL_SECONDS) and not cancelled():
            pass
    if cancelled():
        abort()
        raise Cancelled()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
