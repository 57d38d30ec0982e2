"""What a model sends to ``create_booking``, unwrapped to one flat dict of known fields (pure, never raises).

Models send the same booking in many shapes: the fields at the top, inside ``{"arguments": "<JSON text>"}``,
``{"input": {...}}``, ``{"booking": {...}}``, a list of one object, JSON encoded twice, keys in Spanish,
Portuguese or English, and the word ``undefined`` (or "sin teléfono", "-", "n/a") where a value is missing.
:func:`flatten` walks all of it breadth first (outer values win over inner ones) within fixed caps, so any
input, however deep, big or self-referencing, ends in bounded time.
"""
from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import deque
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

from core.base.language import fold

#: The fields :func:`flatten` keeps, in the order they are reported.
FIELDS = ("name", "email", "phone", "date", "time", "start", "notes", "idempotency_key")

MAX_DEPTH = 8            # wrappers inside wrappers: deeper is junk
MAX_NODES = 400          # containers visited in all
MAX_JSON_CHARS = 20_000  # a longer string is not parsed as JSON
MAX_CHARS = {"notes": 1000}
MAX_VALUE_CHARS = 300

_ALIASES = {
    "name": "name nombre nome fullname nombrecompleto nomecompleto customername clientname cliente client "
            "customer contactname paciente patient person persona pessoa",
    "email": "email correo correoelectronico mail emailaddress correoe direccioncorreo enderecoemail "
             "emailcliente customeremail",
    "phone": "phone telefono telefone telephone mobile movil celular cel tel phonenumber numerotelefono "
             "numerodetelefono whatsapp mobilephone customerphone contactphone",
    "date": "date fecha data dia day fechacita datacita appointmentdate bookingdate",
    "time": "time hora horario horainicio appointmenttime bookingtime",
    "start": "start datetime slot inicio startat starttime startdatetime startsat fechahora datahora when "
             "cuando quando appointment cita reserva booking",
    "notes": "notes note notas nota comentario comentarios comment comments observaciones observacoes "
             "observacao motivo reason message mensaje mensagem details detalles detalhes",
    "idempotency_key": "idempotencykey idempotency idemkey idempotencyid dedupekey",
}
ALIASES: dict[str, str] = {alias: field for field, words in _ALIASES.items() for alias in words.split()}
_GIVEN = frozenset("firstname givenname nombrepila primernombre primeironome".split())
_FAMILY = frozenset("lastname surname familyname apellido apellidos sobrenome".split())
#: Keys whose container value is a tool call's arguments: the envelope's own "name" is the tool's, not a person's.
_ENVELOPE = frozenset("arguments input parameters params args toolinput functionarguments".split())
_TOOL_NAME = re.compile(r"[a-z]\w*(?:[_.]\w+)+|[a-z]+[A-Z]\w*")  # create_booking, functions.book, createBooking

_PLACEHOLDERS = frozenset(fold(p) for p in (
    "undefined", "null", "none", "nil", "nan", "no", "n/a", "na", "n.a.", "n/d", "nd", "-", "--", "—", "–", "?",
    "...", "…", "sin teléfono", "sin telefono", "sin email", "sin e-mail", "sin correo", "sin datos",
    "sem telefone", "sem email", "sem e-mail", "no tengo", "não tenho", "nao tenho", "not provided",
    "not given", "none provided", "no phone", "no email", "not available", "unknown", "desconocido",
    "ninguno", "ninguna", "nenhum", "nenhuma", "[object object]", "missing", "empty", "vacío", "vazio", "tbd",
))
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff\ufffe\uffff]")
_SPACE = re.compile(r"\s+")
_KEY_JUNK = re.compile(r"[^0-9a-z]+")


def key_of(key: Any) -> str:
    """A field name folded for the alias table: 'E-mail' -> 'email', 'Teléfono' -> 'telefono', 'fullName' ->
    'fullname'."""
    if not isinstance(key, str | int) or isinstance(key, bool) or (isinstance(key, int) and abs(key) >= 10 ** 20):
        return ""
    return _KEY_JUNK.sub("", fold(str(key)[:60]))


def clean_text(value: str, limit: int = MAX_VALUE_CHARS) -> str:
    """One line of visible text: NFC, no control or invisible characters, single spaces, at most ``limit`` chars.

    Applying it to its own result changes nothing (what :func:`flatten`'s idempotence rests on)."""
    text = value
    for _ in range(3):  # NFC of a cut string can differ from the string: settle it
        text = _SPACE.sub(" ", _CONTROL.sub(" ", unicodedata.normalize("NFC", text))).strip()[:limit].rstrip()
        if unicodedata.normalize("NFC", text) == text:
            return text
    return ""


def is_placeholder(text: str) -> bool:
    """Whether a value only says that there is no value ("undefined", "null", "sin teléfono", "-", "")."""
    folded = fold(text).strip(" .,;:!¡¿'\"`()[]{}<>")
    return not folded or folded in _PLACEHOLDERS or fold(text).strip() in _PLACEHOLDERS


def scalar_text(value: Any, limit: int = MAX_VALUE_CHARS) -> str | None:
    """A scalar as the text kept for a field, or None (missing: placeholder, boolean, NaN, JSON text, junk)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        text = str(value) if abs(value) < 10 ** 20 else ""
    elif isinstance(value, float):
        text = "" if not math.isfinite(value) else (str(int(value)) if value.is_integer() else repr(value))
    elif isinstance(value, datetime | date | time):
        text = value.isoformat()
    elif isinstance(value, str):
        text = value
    else:
        return None
    text = clean_text(text, limit)
    if is_placeholder(text) or _decoded(text) is not None:
        return None
    return text


def _decoded(text: str) -> Any:
    """The value JSON text stands for when it is a container or a quoted string; None for anything else."""
    head = text[:1]
    if head not in ('{', '[', '"') or len(text) > MAX_JSON_CHARS:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict | list | str) else None


def _unwrapped(value: Any) -> Any:
    """A value with the JSON text around it taken off (JSON inside JSON, within the depth cap)."""
    for _ in range(MAX_DEPTH):
        if isinstance(value, bytes | bytearray):
            value = bytes(value[:MAX_JSON_CHARS]).decode("utf-8", errors="replace")
        if not isinstance(value, str):
            return value
        decoded = _decoded(value.strip())
        if decoded is None:
            return value
        value = decoded
    return None


def _items(node: Any) -> list[tuple[Any, Any]]:
    if isinstance(node, Mapping):
        try:
            return list(node.items())[:100]
        except Exception:  # a Mapping of someone else's that fails to iterate is junk, not a fault of ours
            return []
    if isinstance(node, list | tuple):
        return [(None, item) for item in node[:20]]
    return []


def flatten(raw: Any) -> dict[str, str]:
    """The known fields found anywhere in ``raw``: outermost first, the first real value of each field wins."""
    found: dict[str, str] = {}
    given = family = None
    queue: deque[tuple[Any, int]] = deque([(_unwrapped(raw), 0)])
    visited = 0
    while queue and visited < MAX_NODES:
        node, depth = queue.popleft()
        visited += 1
        items = _items(node)
        envelope = any(key_of(k) in _ENVELOPE and isinstance(_unwrapped(v), Mapping | list) for k, v in items)
        for key, value in items:
            value = _unwrapped(value)
            if isinstance(value, Mapping | list | tuple):
                if depth + 1 < MAX_DEPTH:
                    queue.append((value, depth + 1))
                continue
            name = key_of(key)
            if envelope and name == "name" and isinstance(value, str) and _TOOL_NAME.fullmatch(value.strip()):
                continue
            field = ALIASES.get(name)
            if field is None and name not in _GIVEN and name not in _FAMILY:
                continue
            text = scalar_text(value, MAX_CHARS.get(field or "", MAX_VALUE_CHARS))
            if text is None:
                continue
            if field is not None:
                found.setdefault(field, text)
            elif name in _GIVEN:
                given = given or text
            else:
                family = family or text
    if "name" not in found and (given or family):
        whole = scalar_text(" ".join(part for part in (given, family) if part))
        if whole:
            found["name"] = whole
    return {field: found[field] for field in FIELDS if field in found}
