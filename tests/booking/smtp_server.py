"""A real SMTP server for the outbox tests: aiosmtpd's Controller on a free loopback port, with a handler that
keeps every message it accepts (or refuses them all with 554 while ``refuse`` is set), optionally STARTTLS or
implicit TLS with a throw-away certificate for 127.0.0.1, and a login."""
from __future__ import annotations

import asyncio
import ipaddress
import ssl
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Iterator

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.servers import free_port


class Inbox:
    """aiosmtpd handler: accepted messages in ``messages`` (parsed), every DATA attempt counted in ``attempts``."""

    def __init__(self, refuse: bool = False, delay: float = 0.0) -> None:
        self.refuse, self.delay = refuse, delay
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.attempts = 0

    async def handle_DATA(self, server, session, envelope):
        self.attempts += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.refuse:
            return "554 5.7.1 Message refused by policy"
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.messages.append(message_from_bytes(envelope.original_content, policy=policy.default))
        return "250 2.0.0 OK: queued"


class Logins:
    """aiosmtpd authenticator that takes one user and password."""

    def __init__(self, user: str, password: str) -> None:
        self.user, self.password = user.encode(), password.encode()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (self.user,
                                                                                                self.password)
        return AuthResult(success=ok, handled=False)


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost (cert, key) written to ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                        x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def server_tls(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def trusting(cert: Path) -> ssl.SSLContext:
    """A client context that trusts only the throw-away certificate (host name still checked)."""
    return ssl.create_default_context(cafile=str(cert))


@contextmanager
def smtp_server(handler, **kwargs) -> Iterator[int]:
    """Run aiosmtpd on 127.0.0.1:<free port> until the block ends; yields the port."""
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port, ready_timeout=10, **kwargs)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


def attachment(message: EmailMessage, content_type: str = "text/calendar"):
    """The first part of ``message`` with that content type."""
    for part in message.walk():
        if part.get_content_type() == content_type:
            return part
    raise AssertionError(f"no {content_type} part in the message")
