"""Sending one outbox message by SMTP (stdlib ``smtplib`` + ``email``), as COBERTURA_SMTP_* configure it.

The message is a ``multipart/mixed`` e-mail: the text in the customer's language and, when the booking has one,
the invitation as a ``text/calendar; method=REQUEST`` (or ``CANCEL``) attachment. STARTTLS (default) and SSL
verify the server's certificate and never fall back to plain text; every conversation has a timeout. A failure
is a :class:`MailError` whose message says what the server or the network answered and which variable to check
(never the password).
"""
from __future__ import annotations

import smtplib
import socket
import ssl
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr

from core.base.config import Settings
from core.booking.ics import method_of

NOT_CONFIGURED = ("SMTP is not configured (set COBERTURA_SMTP_HOST and COBERTURA_SMTP_FROM, and COBERTURA_SMTP_USER "
                  "with COBERTURA_SMTP_PASSWORD if the server wants a login): the message waits in the outbox and is "
                  "sent once it is set.")


class MailError(Exception):
    """One delivery attempt failed; ``str()`` is the reason stored as the message's last_error. ``server``: the
    server, the network or the settings failed (the next message would fail alike), not this one message."""

    def __init__(self, reason: str, server: bool = True) -> None:
        super().__init__(reason)
        self.server = server


def configured(settings: Settings) -> bool:
    return bool(settings.smtp_host and settings.smtp_from)


def tls_context() -> ssl.SSLContext:
    """The TLS settings of STARTTLS and SSL: the system's trusted certificates, host name checked."""
    return ssl.create_default_context()


def compose(settings: Settings, row: dict, now: datetime) -> EmailMessage:
    """The e-mail of one outbox row (``id``, ``recipient``, ``subject``, ``body``, ``ics``). The Message-ID is the
    row's, so a retry after a lost acknowledgement is recognisably the same message."""
    message = EmailMessage()
    domain = parseaddr(settings.smtp_from)[1].rpartition("@")[2] or "localhost"
    message["From"] = settings.smtp_from
    message["To"] = row["recipient"]
    message["Subject"] = row["subject"]
    message["Date"] = format_datetime(now)
    message["Message-ID"] = f"<{row['id']}@{domain}>"
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(row["body"])
    if row.get("ics"):
        method = method_of(row["ics"])
        message.add_attachment(row["ics"].encode("utf-8"), maintype="text", subtype="calendar",
                               filename="cancel.ics" if method == "CANCEL" else "invite.ics",
                               params={"method": method, "charset": "utf-8"})
    return message


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _reason(exc: BaseException, settings: Settings) -> str:
    """What went wrong, for the admin reading the outbox."""
    where = f"{settings.smtp_host}:{settings.smtp_port}"
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        refused = "; ".join(f"{rcpt} ({code} {_text(text)})" for rcpt, (code, text) in exc.recipients.items())
        return f"The SMTP server {where} refused the recipient: {refused}."
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return (f"The SMTP server {where} refused the sender {exc.sender} ({exc.smtp_code} {_text(exc.smtp_error)}): "
                "check COBERTURA_SMTP_FROM.")
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return (f"The SMTP server {where} refused the login ({exc.smtp_code} {_text(exc.smtp_error)}): check "
                "COBERTURA_SMTP_USER and COBERTURA_SMTP_PASSWORD.")
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return (f"The SMTP server {where} does not support what COBERTURA_SMTP_SECURITY={settings.smtp_security} "
                f"or the login needs ({exc}); nothing was sent in plain text. Check COBERTURA_SMTP_SECURITY and "
                "COBERTURA_SMTP_PORT (587 starttls, 465 ssl).")
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"The SMTP server {where} refused the message ({exc.smtp_code} {_text(exc.smtp_error)})."
    if isinstance(exc, ssl.SSLError):
        return (f"The TLS connection to {where} failed ({exc.reason or exc}): check COBERTURA_SMTP_SECURITY and "
                "COBERTURA_SMTP_PORT (587 starttls, 465 ssl) and the server's certificate.")
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return f"The SMTP server {where} did not answer within {settings.smtp_timeout:g} s."
    if isinstance(exc, smtplib.SMTPException):
        return f"The SMTP conversation with {where} failed ({exc})."
    return (f"Could not reach the SMTP server {where} ({getattr(exc, 'strerror', None) or exc}): check "
            "COBERTURA_SMTP_HOST and COBERTURA_SMTP_PORT.")


def _open(settings: Settings) -> smtplib.SMTP:
    if settings.smtp_security == "ssl":
        return smtplib.SMTP_SSL(settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout,
                                context=tls_context())
    return smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout)


def send(settings: Settings, message: EmailMessage) -> None:
    """Hand one message to the SMTP server; MailError (with the reason) when it is not accepted."""
    if not configured(settings):
        raise MailError(NOT_CONFIGURED)
    try:
        with _open(settings) as smtp:
            smtp.ehlo()
            if settings.smtp_security == "starttls":
                smtp.starttls(context=tls_context())
                smtp.ehlo()
            if settings.smtp_user:
                smtp.login(settings.smtp_user, settings.smtp_password)
            smtp.send_message(message)
    except (smtplib.SMTPException, OSError) as exc:  # ssl.SSLError and timeouts are OSErrors
        one_message = isinstance(exc, (smtplib.SMTPRecipientsRefused, smtplib.SMTPDataError))
        raise MailError(_reason(exc, settings), server=not one_message) from None
