"""The layout a newcomer reads: `ls core/` shows the packages, each says what it holds, nothing grows too big."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"base", "tenancy", "knowledge", "grounding", "agent", "channels", "gaps", "actions", "booking", "qa",
            "curation"}
ROOT_MODULES = {"__init__.py", "__main__.py", "runtime.py", "demo.py"}
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 60
CHECKED = ("core", "api", "pages")


def too_long(source: str, name: str, max_lines: int = MAX_FUNCTION_LINES) -> list[str]:
    """Functions of ``source`` longer than ``max_lines`` (from ``def`` to their last line)."""
    return [f"{name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > max_lines]


def modules() -> list[Path]:
    return [p for folder in CHECKED for p in (ROOT / folder).rglob("*.py")] + [ROOT / "app.py"]


def test_core_shows_only_its_packages_and_the_root_modules():
    entries = {p.name for p in (ROOT / "core").iterdir() if p.name != "__pycache__"}
    assert {e for e in entries if (ROOT / "core" / e).is_dir()} == PACKAGES
    assert {e for e in entries if not (ROOT / "core" / e).is_dir()} == ROOT_MODULES


def test_every_package_says_what_lives_there():
    for init in (ROOT / "core").rglob("__init__.py"):
        if init.parent == ROOT / "core":
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and "import" in doc.lower(), f"{init.relative_to(ROOT)} must say what lives there and may import"


def test_no_module_is_over_400_lines():
    big = [f"{p.relative_to(ROOT)} ({n})" for p in modules() if (n := len(p.read_text(encoding="utf-8").splitlines()))
           > MAX_MODULE_LINES]
    assert big == []


def test_no_function_is_over_60_lines():
    assert [hit for p in modules() for hit in too_long(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))] == []


def test_the_function_length_check_reports_a_long_function():
    body = "\n".join(f"    x{n} = {n}" for n in range(60))
    assert too_long(f"def short():\n    return 1\n\n\ndef long():\n{body}\n", "m.py") == ["m.py:5 long (61 lines)"]
