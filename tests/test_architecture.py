"""Rules of the layout that a test can hold: core never imports streamlit; no utils/helpers modules."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    import re

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
