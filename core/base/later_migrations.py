"""Migrations from 012 on (``core.base.migrations`` lists them after its own, in this order).

Append-only like the first ones: never edit or reorder a released migration, add a new one. Each runs inside
the store's write transaction; use :func:`core.base.rebuilds.run_script` for several statements.
"""
from __future__ import annotations

from typing import Callable

import sqlite_utils

MIGRATIONS: list[tuple[str, Callable[[sqlite_utils.Database], None]]] = [
]
