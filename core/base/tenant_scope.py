"""The store's half of tenant isolation: a tenant id in SQL must come from an issued ``TenantContext``.

``core.tenancy`` hands a context's tenant id out as a :class:`TenantKey` (an ``int`` that only it mints), and
every connection of the store is a :class:`GuardedConnection`: a statement that filters on ``tenant_id = ?``
or inserts a ``tenant_id`` column refuses a value that is not a ``TenantKey``. So a look-alike of a context
(any object with a ``tenant_id`` attribute holding a number) reaches no tenant's rows, whichever module it is
handed to. Copies and pickles of a key come back as plain ``int`` and are refused the same way.
"""
from __future__ import annotations

import re
import sqlite3
from functools import lru_cache

from core.base.errors import PermissionDenied

_SEAL = object()  # core.tenancy passes it to mint; nothing else has a reason to


class ForgedTenant(PermissionDenied):
    """A tenant id or context that core.tenancy did not issue reached tenant data."""


class TenantKey(int):
    """A tenant id as an issued ``TenantContext`` hands it out; built only by :func:`mint` (core.tenancy)."""

    __slots__ = ()

    def __new__(cls, value: int, seal: object = None):
        if seal is not _SEAL:
            raise ForgedTenant("A tenant id reaches the data only through a TenantContext issued by core.tenancy.")
        return super().__new__(cls, value)

    def __reduce__(self):
        return int, (int(self),)  # a copied or pickled key is a plain number again: the store refuses it


def mint(value: int, seal: object) -> TenantKey:
    """The key of tenant ``value``; ``seal`` is core.tenancy's (a test keeps every other caller out)."""
    return TenantKey(value, seal)


_TENANT_EQ = re.compile(r'(?<![\w.])(?:[\w\]"`]+\.)?[\["`]?tenant_id[\]"`]?\s*=\s*(\?|:\w+)', re.IGNORECASE)
_INSERT = re.compile(r'^\s*(?:INSERT|REPLACE)\b[^(]*?\bINTO\s+\S+\s*\(([^)]*)\)\s*VALUES\s*', re.IGNORECASE)


def _rows(sql: str, at: int) -> list[tuple[int, list[str]]]:
    """The VALUES rows from ``at``: (offset of the row's first value, its top-level values), quotes and nested
    parentheses respected."""
    rows: list[tuple[int, list[str]]] = []
    depth, quote, start, values, current = 0, "", 0, [], []
    for i in range(at, len(sql)):
        ch = sql[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
            if depth == 1:
                start, values, current = i + 1, [], []
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                rows.append((start, [*values, "".join(current).strip()]))
                continue
        elif ch == "," and depth == 1:
            values.append("".join(current).strip())
            current = []
            continue
        elif depth == 0 and not ch.isspace() and ch != ",":
            break  # past the last row (ON CONFLICT, RETURNING...)
        if depth >= 1:
            current.append(ch)
    return rows


@lru_cache(maxsize=2048)
def tenant_slots(sql: str) -> tuple[int | str, ...]:
    """Where ``sql`` takes a tenant id: positional indexes (0-based) or parameter names.

    ``tenant_id = ?`` / ``x.tenant_id = :name`` anywhere, and the ``tenant_id`` value of each row of an
    ``INSERT ... (cols) VALUES (...), ...`` when it is a placeholder."""
    slots: list[int | str] = []
    insert = _INSERT.match(sql)
    columns = [c.strip().strip('[]"`').lower() for c in insert.group(1).split(",")] if insert else []
    if "tenant_id" in columns:
        column = columns.index("tenant_id")
        for start, values in _rows(sql, insert.end()):
            if len(values) == len(columns) and values[column] == "?":
                slots.append(sql.count("?", 0, start) + sum(v.count("?") for v in values[:column]))
            elif len(values) == len(columns) and values[column].startswith(":"):
                slots.append(values[column][1:])
    for match in _TENANT_EQ.finditer(sql):
        marker = match.group(1)
        slots.append(sql.count("?", 0, match.start(1)) if marker == "?" else marker[1:])
    return tuple(slots)


def check_params(sql: str, params) -> None:
    """Refuse ``params`` when a tenant slot of ``sql`` holds anything but a :class:`TenantKey`."""
    if "tenant_id" not in sql.lower():
        return
    for slot in tenant_slots(sql):
        if isinstance(slot, str):
            value = params.get(slot) if isinstance(params, dict) else None
        elif isinstance(params, dict) or slot >= len(params):
            continue  # sqlite reports a wrong parameter count itself
        else:
            value = params[slot]
        if not isinstance(value, TenantKey):
            raise ForgedTenant("Tenant data is read and written only with the tenant id of a TenantContext issued by "
                               f"core.tenancy (got {type(value).__name__}); build one with login, context_for, "
                               "local_operator or visitor_context.")


class GuardedConnection(sqlite3.Connection):
    """A connection that checks every statement's tenant slots (the ``factory`` of the store's connections)."""

    def execute(self, sql: str, parameters=(), /) -> sqlite3.Cursor:
        check_params(sql, parameters)
        return super().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters, /) -> sqlite3.Cursor:
        rows = list(seq_of_parameters)
        for row in rows:
            check_params(sql, row)
        return super().executemany(sql, rows)
