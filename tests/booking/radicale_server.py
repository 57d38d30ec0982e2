"""A real Radicale CalDAV server for the tests: ``python -m radicale`` on a free loopback port over a temp dir.

``radicale(folder)`` starts it (auth ``none`` by default: any user name, any password; or ``users=`` to require
those passwords, htpasswd in plain text; ``rights=`` for who may read or write what) and stops it when the block
ends. ``server.new_calendar()`` makes one fresh calendar collection (MKCALENDAR) and answers an
:class:`OtherClient`: plain HTTP with nothing of ours in it, the staff's calendar app editing events behind the
agent's back.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, make_server

import httpx

from tests.servers import free_port, wait_until_up

USER = "staff"

_MKCALENDAR = ('<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" '
               'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>{name}</D:displayname>'
               '<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>'
               '</D:prop></D:set></C:mkcalendar>')


@dataclass(frozen=True)
class OtherClient:
    """Another CalDAV client on one calendar collection (``url`` ends with a slash)."""

    url: str
    auth: tuple[str, str]

    def href(self, name: str) -> str:
        return f"{self.url}{name}"

    def put(self, name: str, ics: str, headers: dict | None = None) -> httpx.Response:
        return httpx.put(self.href(name), content=ics.encode(), auth=self.auth, timeout=10,
                         headers={"Content-Type": "text/calendar; charset=utf-8", **(headers or {})})

    def get(self, name: str) -> httpx.Response:
        return httpx.get(self.href(name), auth=self.auth, timeout=10)

    def delete(self, name: str) -> httpx.Response:
        return httpx.delete(self.href(name), auth=self.auth, timeout=10)


@dataclass(frozen=True)
class Radicale:
    base: str                     # http://127.0.0.1:PORT
    users: dict[str, str]         # empty: auth "none"

    @property
    def auth(self) -> tuple[str, str]:
        return (USER, self.users.get(USER, "any password"))

    def new_calendar(self, name: str = "Citas") -> OtherClient:
        url = f"{self.base}/{USER}/{uuid.uuid4().hex}/"
        made = httpx.request("MKCALENDAR", url, content=_MKCALENDAR.format(name=name).encode(), auth=self.auth,
                             headers={"Content-Type": "application/xml; charset=utf-8"}, timeout=10)
        assert made.status_code == 201, f"MKCALENDAR {url}: {made.status_code} {made.text}"
        return OtherClient(url, self.auth)


def _config(folder: Path, port: int, users: dict[str, str], rights: str) -> Path:
    auth, rule = "type = none", "type = owner_only"
    if rights:
        (folder / "rights").write_text(rights)
        rule = f"type = from_file\nfile = {folder / 'rights'}"
    if users:
        htpasswd = folder / "users"
        htpasswd.write_text("".join(f"{user}:{password}\n" for user, password in users.items()))
        auth = f"type = htpasswd\nhtpasswd_filename = {htpasswd}\nhtpasswd_encryption = plain\ndelay = 0"
    config = folder / "config"
    config.write_text(f"[server]\nhosts = 127.0.0.1:{port}\n\n[auth]\n{auth}\n\n[rights]\n{rule}\n\n"
                      f"[storage]\nfilesystem_folder = {folder / 'collections'}\n\n[web]\ntype = internal\n\n"
                      "[logging]\nlevel = warning\n")
    return config


@contextmanager
def radicale(folder: Path, users: dict[str, str] | None = None, rights: str = "") -> Iterator[Radicale]:
    """Radicale on a free loopback port, its storage and config in ``folder``, until the block ends; ``rights``: a
    rights file (Radicale's ``from_file`` format) instead of "every user owns only their own collections"."""
    folder.mkdir(parents=True, exist_ok=True)
    port, users = free_port(), dict(users or {})
    log = open(folder / "radicale.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "radicale", "--config", str(_config(folder, port, users, rights))],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(proc, f"{base}/.web/", 30, "radicale")
        except AssertionError:
            raise AssertionError((folder / "radicale.log").read_text()) from None
        yield Radicale(base, users)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextmanager
def radicale_without_put_etags(folder: Path) -> Iterator[Radicale]:
    """Radicale (auth none) in a thread of this process behind a wrapper that drops the ETag header from every PUT
    answer, as some CalDAV servers do: a client must read the ETag back itself."""
    from radicale import Application, config

    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    app = Application(config.load([(str(_config(folder, port, {}, "")), False)]))

    def without_put_etags(environ, start_response):
        def start(status, headers, exc_info=None):
            if environ["REQUEST_METHOD"] == "PUT":
                headers = [(name, value) for name, value in headers if name.lower() != "etag"]
            return start_response(status, headers, exc_info)
        return app(environ, start)

    server = make_server("127.0.0.1", port, without_put_etags, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Radicale(f"http://127.0.0.1:{port}", {})
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
