"""Rules of the layout that a static test can hold (see the architecture notes in the README).

- core never imports streamlit, web frameworks, ``api`` or ``pages``; no utils/helpers modules;
- layers: a package imports only its own package and lower layers (``agent`` never the runtime);
- each table has one owning module, and only that module's SQL touches it;
- only ``core.tenancy`` constructs a ``TenantContext``;
- only ``core/base/clock.py`` reads the wall clock.

Every checker is a pure function over file texts (or an import graph) returning a list of violations, so each
rule has a negative control: a synthetic input that breaks it, which the checker must report.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def python_files(*tops: str) -> dict[str, str]:
    """``{path relative to the repository: text}`` of every Python file under the given folders (or files)."""
    out = {}
    for top in tops:
        base = ROOT / top
        paths = [base] if base.is_file() else sorted(base.rglob("*.py")) if base.is_dir() else []
        for path in paths:
            if "__pycache__" not in path.parts:
                out[rel(path)] = path.read_text(encoding="utf-8")
    return out


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_core_never_imports_streamlit():
    offenders = [str(p) for p in (ROOT / "core").rglob("*.py") if "streamlit" in imported_modules(p)]
    assert offenders == []


def test_no_grab_bag_modules():
    assert not [p for p in ROOT.rglob("*.py") if p.stem in ("utils", "helpers", "misc") and ".git" not in p.parts]


def sql_strings(path: Path) -> list[str]:
    """Every string literal (adjacent literals and f-strings joined as Python joins them)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
    return out


def test_tenant_tables_are_only_touched_with_the_tenant_in_the_where_clause():
    """Every SQL statement on a tenant table in core/ names tenant_id (a cheap static guard)."""
    tenant_tables = ("sources", "folders", "chunks", "read_log")
    checked = 0
    for path in (ROOT / "core").rglob("*.py"):
        if path.name in ("store.py", "migrations.py"):
            continue  # schema and migrations
        for statement in sql_strings(path):
            if not re.match(r"\s*(SELECT|UPDATE|DELETE|INSERT)\b", statement):
                continue
            if any(re.search(rf"\b(FROM|UPDATE|INTO|JOIN)\s+{t}\b", statement) for t in tenant_tables):
                checked += 1
                assert "tenant_id" in statement, (path.name, statement)
    assert checked > 20


# == 1. Layers ================================================================================================
#: lowest first; a package may import its own package and lower ranks. Equal ranks never import each other,
#: except the pairs of SAME_LAYER_ALLOWED.
LAYERS = {"base": 0, "tenancy": 1, "knowledge": 2, "grounding": 2, "agent": 3, "channels": 4, "gaps": 4,
          "actions": 4, "booking": 4, "qa": 5, "curation": 5}
ROOT_MODULES = {"runtime", "demo", "__main__"}  # core/runtime.py, core/demo.py, core/__main__.py
ROOT_RANK = 6
TYPE_ONLY_ROOT = {"runtime"}  # packages receive the runtime as a parameter and may name its type
SAME_LAYER_ALLOWED = {("channels", "gaps"), ("curation", "qa"),  # (importer, imported): never the other way
                      ("booking", "actions")}
FORBIDDEN_IN_CORE = {"streamlit", "fastapi", "starlette", "sse_starlette", "uvicorn", "api", "pages"}


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` (a file path relative to the repository) imports module ``target``."""

    source: str
    line: int
    target: str
    type_only: bool = False  # under ``if TYPE_CHECKING:``
    lazy: bool = False  # inside a function

    def where(self) -> str:
        kind = " (TYPE_CHECKING)" if self.type_only else " (inside a function)" if self.lazy else ""
        return f"{self.source}:{self.line}: imports {self.target}{kind}"


def module_of(path: str) -> str:
    """``core/agent/loop.py`` -> ``core.agent.loop``; a package's ``__init__.py`` -> the package."""
    parts = path[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_edges(path: str, text: str) -> list[Edge]:
    """Every import of a file, at any depth (functions included), with ``from core import x`` resolved to
    ``core.x``, relative imports resolved, and ``importlib.import_module("...")`` with a literal name."""
    package = module_of(path) if path.endswith("__init__.py") else module_of(path).rpartition(".")[0]
    edges: list[Edge] = []

    def absolute(module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = package.split(".")[: len(package.split(".")) - (level - 1)]
        return ".".join(base + ([module] if module else []))

    def visit(node: ast.AST, type_only: bool, lazy: bool) -> None:
        if isinstance(node, ast.Import):
            edges.extend(Edge(path, node.lineno, a.name, type_only, lazy) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node.module, node.level)
            for alias in node.names:
                # ``from core import qa`` imports the package core.qa; ``from core.qa import suites`` names a member
                target = f"{module}.{alias.name}" if module == "core" else module
                edges.append(Edge(path, node.lineno, target, type_only, lazy))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
            edges.append(Edge(path, node.lineno, node.args[0].value, type_only, lazy))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True, lazy)
            for child in node.orelse:
                visit(child, type_only, lazy)
            visit(node.test, type_only, lazy)
            return
        inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, type_only, inner)

    visit(ast.parse(text), False, False)
    return edges


def unit_of(module: str) -> str | None:
    """The layer unit of a ``core`` module: its package (``agent`` for ``core.agent.providers.chain``),
    ``root`` for core/runtime.py, core/demo.py, core/__main__.py, ``core`` for the bare namespace; None when
    the module is not part of ``core``."""
    parts = module.split(".")
    if parts[0] != "core":
        return None
    if len(parts) == 1:
        return "core"
    return "root" if parts[1] in ROOT_MODULES else parts[1]


def rank_of(unit: str) -> int | None:
    if unit == "root":
        return ROOT_RANK
    if unit == "core":
        return -1  # core/__init__.py: imports nothing of core
    return LAYERS.get(unit)


def layer_violations(edges: list[Edge]) -> list[str]:
    """Imports from ``core`` modules that go up a layer, sideways between same-layer packages (outside
    SAME_LAYER_ALLOWED), or into a package with no layer. TYPE_CHECKING imports may go anywhere in core but
    the root modules, core.runtime excepted."""
    out = []
    for edge in edges:
        importer, target = unit_of(module_of(edge.source)), unit_of(edge.target)
        if importer is None or target is None or target == "core" or importer == target:
            continue
        for unit in (importer, target):
            if rank_of(unit) is None:
                out.append(f"{edge.where()}: package core.{unit} has no layer (add it to LAYERS)")
                break
        else:
            if importer == "root":
                continue
            if edge.type_only:
                if target == "root" and edge.target.split(".")[1] not in TYPE_ONLY_ROOT:
                    out.append(f"{edge.where()}: only core.runtime may be named for type hints, not {edge.target}")
                continue
            mine, theirs = rank_of(importer), rank_of(target)
            if theirs > mine or (theirs == mine and (importer, target) not in SAME_LAYER_ALLOWED):
                out.append(f"{edge.where()}: {importer} (layer {mine}) may not import {target} (layer {theirs})")
    return out


def agent_runtime_violations(edges: list[Edge]) -> list[str]:
    """core/agent receives its tools and services: it never imports core.runtime (TYPE_CHECKING aside)."""
    return [edge.where() for edge in edges
            if edge.source.startswith("core/agent/") and not edge.type_only
            and (edge.target == "core.runtime" or edge.target.startswith("core.runtime."))]


def forbidden_import_violations(edges: list[Edge]) -> list[str]:
    """core never imports streamlit, the web stack, ``api`` or ``pages`` (not even for type hints)."""
    return [edge.where() for edge in edges
            if edge.source.startswith("core/") and edge.target.split(".")[0] in FORBIDDEN_IN_CORE]


def core_edges() -> list[Edge]:
    return [e for path, text in python_files("core").items() for e in import_edges(path, text)]


def test_core_packages_import_only_lower_layers():
    edges = core_edges()
    assert len([e for e in edges if e.target.startswith("core.")]) > 100  # the graph was really read
    assert layer_violations(edges) == []


def test_agent_never_imports_the_runtime():
    assert agent_runtime_violations(core_edges()) == []


def test_core_never_imports_web_frameworks_api_or_pages():
    assert forbidden_import_violations(core_edges()) == []


def packages_without_layer(paths: list[str]) -> list[str]:
    """The top-level packages of core (``core/<name>/...``) missing from LAYERS; a new root module is one too."""
    out = set()
    for path in paths:
        parts = path.split("/")
        if parts[0] == "core" and len(parts) > 2 and parts[1] not in LAYERS:
            out.add(f"core/{parts[1]}/")
        elif parts[0] == "core" and len(parts) == 2 and parts[1][:-3] not in ROOT_MODULES | {"__init__"}:
            out.add(path)
    return sorted(out)


def test_every_core_package_has_a_layer():
    paths = list(python_files("core"))
    assert "core/base/store.py" in paths
    assert packages_without_layer(paths) == []
    assert packages_without_layer(["core/base/x.py", "core/billing/holds.py", "core/billing/p/q.py", "core/cards.py",
                                   "core/runtime.py", "core/__init__.py"]) == ["core/billing/", "core/cards.py"]


def test_layer_checker_reports_imports_up_and_sideways():
    """Negative control on a synthetic import graph."""
    graph = [
        Edge("core/base/store.py", 1, "core.tenancy.context"),  # up
        Edge("core/knowledge/training.py", 2, "core.grounding.claims"),  # sideways, same layer
        Edge("core/grounding/gate.py", 3, "core.knowledge.sources"),  # sideways, same layer
        Edge("core/gaps/backlog.py", 4, "core.channels.handoff"),  # gaps never channels
        Edge("core/qa/runs.py", 5, "core.curation.impact"),  # same layer
        Edge("core/agent/loop.py", 6, "core.runtime", lazy=True),  # up into the root, lazily
        Edge("core/agent/providers/chain.py", 7, "core.channels.turn"),  # a sub-package counts as its package
        Edge("core/tenancy/context.py", 8, "core.billing.holds"),  # a package with no layer
        Edge("core/__init__.py", 9, "core.base"),  # the namespace imports nothing
        Edge("core/qa/cli.py", 16, "core.__main__", type_only=True),  # type hints of a root module but runtime
    ]
    allowed = [
        Edge("core/channels/handoff.py", 10, "core.gaps.backlog"),  # the one named same-layer pair
        Edge("core/agent/loop.py", 11, "core.runtime", type_only=True),  # type hints only
        Edge("core/knowledge/sources.py", 12, "core.qa.suites", type_only=True),
        Edge("core/runtime.py", 13, "core.qa.suites"),  # the root composes everything
        Edge("core/knowledge/training.py", 14, "core.knowledge.chunking"),  # its own package
        Edge("core/gaps/model.py", 15, "numpy"),  # not core
    ]
    found = layer_violations(graph + allowed)
    assert [int(v.split(":")[1]) for v in found] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 16]
    assert "has no layer" in found[7] and "only core.runtime" in found[9]


def test_import_extraction_sees_lazy_type_checking_from_core_and_relative_imports():
    """Negative control on synthetic source: what the extractor must find for the checkers to see it."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from core import runtime\n"
        "if TYPE_CHECKING:\n"
        "    from core.qa.suites import Suite\n"
        "else:\n"
        "    import core.channels.handoff\n"
        "def f():\n"
        "    from core.curation import impact\n"
        "    import importlib\n"
        "    importlib.import_module('core.gaps.backlog')\n"
        "from .chunking import chunk_text\n"
        "import streamlit as st\n"
    )
    edges = import_edges("core/knowledge/training.py", source)
    by_line = {e.line: e for e in edges if e.target.startswith("core")}
    assert by_line[2].target == "core.runtime" and not by_line[2].type_only
    assert by_line[4].type_only and by_line[4].target == "core.qa.suites"
    assert not by_line[6].type_only  # the else branch runs
    assert by_line[8].lazy and by_line[8].target == "core.curation"
    assert by_line[10].target == "core.gaps.backlog"
    assert by_line[11].target == "core.knowledge.chunking"
    lines = sorted(int(v.split(":")[1]) for v in layer_violations(edges))
    assert lines == [2, 6, 8, 10]  # runtime, channels, curation, gaps; not the TYPE_CHECKING one, not its own
    assert forbidden_import_violations(edges) == ["core/knowledge/training.py:12: imports streamlit"]
    agent = import_edges("core/agent/tools.py", "from core.runtime import Runtime\n"
                                                "if TYPE_CHECKING:\n    from core.runtime import Runtime\n"
                                                "def g():\n    import core.runtime\n")
    assert [int(v.split(":")[1]) for v in agent_runtime_violations(agent)] == [1, 5]


def test_forbidden_imports_checker_reports_each_framework():
    edges = [Edge("core/x.py", n, name) for n, name in enumerate(
        ["streamlit", "fastapi.responses", "starlette.requests", "sse_starlette.sse", "uvicorn", "api.app",
         "pages.common", "sqlite_utils"], start=1)]
    edges.append(Edge("core/y.py", 9, "starlette", type_only=True))  # not even for type hints
    edges.append(Edge("api/app.py", 10, "starlette"))  # api is outside core
    assert [int(v.split(":")[1]) for v in forbidden_import_violations(edges)] == [1, 2, 3, 4, 5, 6, 7, 9]


# == 2. Table owners ==========================================================================================
#: each table -> the one module whose SQL may read or write it (relative to the repository root)
TABLE_OWNERS = {
    "tenants": "core/tenancy/tenants.py",
    "users": "core/tenancy/tenants.py",
    "memberships": "core/tenancy/tenants.py",
    "tenant_settings": "core/tenancy/settings.py",
    "site_keys": "core/tenancy/site_keys.py",
    "admin_sessions": "core/tenancy/sessions.py",
    "sources": "core/knowledge/sources.py",
    "folders": "core/knowledge/sources.py",
    "chunks": "core/knowledge/training.py",
    "read_log": "core/knowledge/browse.py",
    "variant_models": "core/knowledge/variants.py",
    "vectors": "core/knowledge/embeddings.py",  # the embedding cache's own database file (not a migration)
    "shop_orders": "api/demo_shop.py",  # the demo shop's own database file, demo-shop.sqlite (not a migration)
    "shop_idempotency": "api/demo_shop.py",
    "conversations": "core/channels/conversations.py",
    "turns": "core/channels/conversations.py",
    "question_log": "core/channels/conversations.py",
    "handoffs": "core/channels/handoff.py",
    "gap_events": "core/gaps/adoption.py",
    "gaps": "core/gaps/backlog.py",
    "gap_variants": "core/gaps/backlog.py",
    "gap_history": "core/gaps/backlog.py",
    "gap_state": "core/gaps/backlog.py",
    "answer_feedback": "core/gaps/feedback.py",
    "source_answers": "core/gaps/source_counts.py",
    "qa_suites": "core/qa/suites.py",
    "qa_cases": "core/qa/suites.py",
    "qa_runs": "core/qa/records.py",
    "qa_results": "core/qa/records.py",
    "action_definitions": "core/actions/definitions.py",
    "mcp_servers": "core/actions/mcp_tools.py",
    "mcp_tools": "core/actions/mcp_tools.py",
    "customer_profiles": "core/actions/builtin.py",
    "cards": "core/actions/cards.py",
    "card_executions": "core/actions/cards.py",
    "card_ledger": "core/actions/ledger.py",
    "actions_switch": "core/actions/switch.py",
    "booking_schedules": "core/booking/schedule.py",
    "bookings": "core/booking/bookings.py",
    "booking_holds": "core/booking/holds.py",
    "booking_blocks": "core/booking/blocks.py",
    "booking_offers": "core/booking/offers.py",
    "booking_calendars": "core/booking/calendars.py",
    "booking_outbox": "core/booking/outbox.py",
    "_migrations": "core/base/store.py",
}
# they create and migrate every table
SCHEMA_FILES = {"core/base/migrations.py", "core/base/later_migrations.py", "core/base/rebuilds.py",
                "core/base/store.py"}
MIGRATIONS = "core/base/migrations.py"

_SQL_TABLE = re.compile(  # uppercase keywords (as the code writes SQL), so prose ("built from sources") is not SQL
    r"\b(?:FROM|JOIN|INTO|TABLE(?:\s+IF\s+(?:NOT\s+)?EXISTS)?|UPDATE(?:\s+OR\s+[A-Z]+)?"
    r"|INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?\w+\s+ON)"
    r"\s+[\"`\[]?([A-Za-z_]\w*)")
_CREATED = re.compile(r"\bCREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`\[]?([A-Za-z_]\w*)")
_TABLE_CALLS = {"table", "create_table", "create_view"}  # sqlite-utils: db.table("x"), db.create_table("x", ...)


def _string_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, text)`` of every string literal; an f-string's holes become ``{}``; each literal once."""
    inside = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in ast.walk(node)
              if v is not node}
    out = []
    for node in ast.walk(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            out.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)))
    return out


def _db_like(node: ast.expr) -> bool:
    """``db``, ``database``, ``x_db``, ``store.db``, ``self.store.db``: a sqlite-utils Database."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in ("db", "database") or name.endswith("_db")


def _sqlite_utils_tables(tree: ast.AST) -> list[tuple[int, str]]:
    """``db["x"]``, ``store.db["x"]``, ``db.table("x")``, ``db.create_table("x", ...)``."""
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and _db_like(node.value) and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)):
            out.append((node.lineno, node.slice.value))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TABLE_CALLS
              and _db_like(node.func.value) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            out.append((node.lineno, node.args[0].value))
    return out


def tables_touched(text: str) -> list[tuple[int, str]]:
    """``(line, table)`` for each table a file's SQL strings or sqlite-utils calls name (each pair once)."""
    tree = ast.parse(text)
    found = [(line, m.group(1)) for line, s in _string_literals(tree) for m in _SQL_TABLE.finditer(s)]
    found += _sqlite_utils_tables(tree)
    return sorted(set(found))


def created_tables(text: str) -> set[str]:
    """The tables a migrations file creates: CREATE TABLE in its SQL, sqlite-utils ``db["x"].create(...)``
    and ``db.create_table("x", ...)``."""
    tree = ast.parse(text)
    out = {m.group(1) for _, s in _string_literals(tree) for m in _CREATED.finditer(s)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        func = node.func
        if (func.attr == "create_table" and _db_like(func.value) and node.args
                and isinstance(node.args[0], ast.Constant)):
            out.add(node.args[0].value)
        elif (func.attr == "create" and isinstance(func.value, ast.Subscript) and _db_like(func.value.value)
              and isinstance(func.value.slice, ast.Constant) and isinstance(func.value.slice.value, str)):
            out.add(func.value.slice.value)
    return out


def ownership_violations(files: dict[str, str], owners: dict[str, str]) -> list[str]:
    """SQL (or sqlite-utils calls) in a file that touch a table another module owns; schema files exempt."""
    out = []
    for path, text in sorted(files.items()):
        if path in SCHEMA_FILES:
            continue
        for line, table in tables_touched(text):
            owner = owners.get(table)
            if owner is not None and owner != path:
                out.append(f"{path}:{line}: touches {table} (owner {owner})")
    return out


def unowned_tables(migrations_text: str, owners: dict[str, str]) -> list[str]:
    return sorted(created_tables(migrations_text) - set(owners))


def duplicate_dict_keys(text: str, name: str) -> list[str]:
    """Keys repeated in the dict literal assigned to ``name`` (Python keeps the last one silently)."""
    out = []
    for node in ast.walk(ast.parse(text)):
        target = (node.targets[0] if isinstance(node, ast.Assign)
                  else node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.Dict):
            keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            out += sorted({k for k in keys if keys.count(k) > 1})
    return out


def test_every_created_table_has_an_owner():
    """Every table the migrations create (and any other CREATE TABLE in core, e.g. the embedding cache's)."""
    text = (ROOT / MIGRATIONS).read_text(encoding="utf-8")
    assert len(created_tables(text)) >= 20  # the migrations were really read
    assert unowned_tables(text, TABLE_OWNERS) == []
    assert sorted({t for other in python_files("core").values() for t in unowned_tables(other, TABLE_OWNERS)}) == []


def test_each_table_has_one_owner_and_the_owner_exists():
    assert duplicate_dict_keys(Path(__file__).read_text(encoding="utf-8"), "TABLE_OWNERS") == []
    assert sorted({o for o in TABLE_OWNERS.values() if not (ROOT / o).is_file()}) == []


def test_only_the_owning_module_touches_a_table():
    """In core (schema files aside) and in api/, pages/ and app.py, which own no table (the demo shop's file aside)."""
    files = python_files("core", "api", "pages", "app.py")
    assert sum(len(tables_touched(t)) for p, t in files.items() if p not in SCHEMA_FILES) > 100  # SQL was read
    assert ownership_violations(files, TABLE_OWNERS) == []


def test_ownership_checker_reports_foreign_sql_and_sqlite_utils_calls():
    """Negative control: every way of naming another module's table is reported, with line and owner."""
    owners = {"gaps": "core/gaps/backlog.py", "handoffs": "core/channels/handoff.py",
              "sources": "core/knowledge/sources.py", "turns": "core/channels/conversations.py",
              "chunks": "core/knowledge/training.py"}
    foreign = (
        'db.execute("UPDATE handoffs SET gap_id = ? WHERE tenant_id = ?", [1])\n'  # 1
        'rows = store.query(f"SELECT {cols} FROM gaps WHERE tenant_id = ? {where}")\n'  # 2
        'db.execute("DELETE FROM sources WHERE tenant_id = ?")\n'  # 3
        'x = ("SELECT c.id FROM chunks c "\n'  # 4: adjacent literals are one string
        '     "JOIN turns t ON t.tenant_id = c.tenant_id")\n'
        'store.db["gaps"].insert({"id": 1})\n'  # 6
        'db.table("handoffs").update(1, {})\n'  # 7
        'self.store.db["turns"].upsert({})\n'  # 8
        'db.execute("INSERT OR REPLACE INTO sources (id) VALUES (?)")\n'  # 9
        '"""Docstring: the chunks built from sources, joined into gaps."""\n'  # 10: prose, not SQL
        'row["gaps"]\n'  # 11: a dict, not a database
        'db.execute("SELECT value FROM json_each(?)")\n'  # 12: not a table
    )
    found = ownership_violations({"core/qa/suites.py": foreign, "core/base/store.py": foreign,
                                  "core/gaps/backlog.py": 'db.execute("UPDATE gaps SET label = ?")\n'}, owners)
    assert found == [
        "core/qa/suites.py:1: touches handoffs (owner core/channels/handoff.py)",
        "core/qa/suites.py:2: touches gaps (owner core/gaps/backlog.py)",
        "core/qa/suites.py:3: touches sources (owner core/knowledge/sources.py)",
        "core/qa/suites.py:4: touches chunks (owner core/knowledge/training.py)",
        "core/qa/suites.py:4: touches turns (owner core/channels/conversations.py)",
        "core/qa/suites.py:6: touches gaps (owner core/gaps/backlog.py)",
        "core/qa/suites.py:7: touches handoffs (owner core/channels/handoff.py)",
        "core/qa/suites.py:8: touches turns (owner core/channels/conversations.py)",
        "core/qa/suites.py:9: touches sources (owner core/knowledge/sources.py)",
    ]


def test_a_new_table_without_an_owner_is_reported():
    migrations = (
        'def _m011(db):\n'
        '    _run_script(db, """\n'
        '        CREATE TABLE IF NOT EXISTS cards (tenant_id INTEGER, id INTEGER PRIMARY KEY);\n'
        '        CREATE TABLE gaps (id INTEGER);\n'
        '        ALTER TABLE gaps ADD COLUMN x TEXT;\n'
        '    """)\n'
        '    db["bookings"].create({"id": int})\n'
        '    db.create_table("holds", {"id": int})\n'
    )
    assert created_tables(migrations) == {"cards", "gaps", "bookings", "holds"}
    assert unowned_tables(migrations, {"gaps": "core/gaps/backlog.py"}) == ["bookings", "cards", "holds"]
    assert duplicate_dict_keys('OWNERS = {"gaps": "a.py", "cards": "b.py", "gaps": "c.py"}\n', "OWNERS") == ["gaps"]


# == 3. Only tenancy builds a TenantContext ====================================================================
TENANT_CONTEXT_BUILDERS = "core/tenancy/"


def tenant_context_constructions(files: dict[str, str]) -> list[str]:
    """Calls of ``TenantContext(...)`` (by name or attribute) outside core/tenancy/."""
    out = []
    for path, text in sorted(files.items()):
        if path.startswith(TENANT_CONTEXT_BUILDERS):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name == "TenantContext":
                    out.append(f"{path}:{node.lineno}: constructs TenantContext")
    return out


def test_only_tenancy_constructs_a_tenant_context():
    files = python_files("core", "api", "pages", "app.py")
    assert any(p.startswith(TENANT_CONTEXT_BUILDERS) for p in files)
    assert tenant_context_constructions(files) == []


def test_tenant_context_checker_reports_constructions_outside_tenancy():
    snippet = ("from core.tenancy import context\nfrom core.tenancy.context import TenantContext\n"
               "ctx = TenantContext(1, 'acme', 'me', 'admin')\n"
               "other = context.TenantContext(2, 'x', 'y', 'admin')\n"
               "def f(ctx: TenantContext) -> TenantContext:\n    return ctx\n")
    found = tenant_context_constructions({"api/chat.py": snippet, "core/tenancy/context.py": snippet,
                                          "pages/qa.py": "x = TenantContext(1, 's', 'a', 'qa')\n"})
    assert found == ["api/chat.py:3: constructs TenantContext", "api/chat.py:4: constructs TenantContext",
                     "pages/qa.py:1: constructs TenantContext"]


# == 4. One clock ==============================================================================================
CLOCK_MODULE = "core/base/clock.py"  # the one reader of the wall clock (injected through the runtime)
WALL_CLOCK = {"datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today", "datetime.date.today",
              "time.time", "time.time_ns"}


def wall_clock_reads(path: str, text: str) -> list[str]:
    """Calls of (or references to, e.g. a ``clock=time.time`` default) the wall clock, through any import
    spelling: ``import datetime as dt``, ``from datetime import datetime``, ``from time import time``..."""
    tree = ast.parse(text)
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}

    def dotted(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.Attribute):
            base = dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(getattr(node, "ctx", None), ast.Load):
            name = dotted(node)
            if name in WALL_CLOCK:
                how = "calls" if id(node) in called else "refers to"
                out.append(f"{path}:{node.lineno}: {how} {name}")
    return sorted(out, key=lambda v: int(v.split(":")[1]))


def clock_violations(files: dict[str, str]) -> list[str]:
    return [v for path, text in sorted(files.items()) if path != CLOCK_MODULE for v in wall_clock_reads(path, text)]


def test_only_the_clock_module_reads_the_wall_clock():
    assert clock_violations(python_files("core")) == []


def test_clock_checker_reports_every_spelling_of_the_wall_clock():
    snippet = (
        "import time\n"  # 1
        "import datetime as dt\n"  # 2
        "from datetime import datetime, date, timezone\n"  # 3
        "from time import time as now_seconds\n"  # 4
        "a = datetime.now(timezone.utc)\n"  # 5
        "b = dt.datetime.utcnow()\n"  # 6
        "c = date.today()\n"  # 7
        "d = time.time()\n"  # 8
        "def f(clock=time.time):\n"  # 9: a default clock still reads the wall clock
        "    return now_seconds()\n"  # 10
        "e = time.monotonic()\n"  # 11: not the wall clock
        "g = datetime.fromisoformat('2024-01-01')\n"  # 12
    )
    assert wall_clock_reads("core/gaps/model.py", snippet) == [
        "core/gaps/model.py:5: calls datetime.datetime.now",
        "core/gaps/model.py:6: calls datetime.datetime.utcnow",
        "core/gaps/model.py:7: calls datetime.date.today",
        "core/gaps/model.py:8: calls time.time",
        "core/gaps/model.py:9: refers to time.time",
        "core/gaps/model.py:10: calls time.time",
    ]
    assert clock_violations({CLOCK_MODULE: snippet, "core/x.py": "import time\nt = time.time()\n"}) == [
        "core/x.py:2: calls time.time"]
