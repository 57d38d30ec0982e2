"""Importing files, folders and web pages into the source tree (K1).

A folder's structure becomes tree paths; a Q&A file becomes a folder of ``qa`` sources, one per pair.
A bad file gets its own error line and the rest of the import goes on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePath

from core.base.store import Store
from core.knowledge import sources as sources_mod
from core.knowledge.extract import SUPPORTED, Extracted, ExtractionError, extract_file, extract_html, fetch_url
from core.knowledge.sources import SourceError, normalize_path, slug
from core.tenancy.context import TenantContext


@dataclass
class ImportReport:
    saved: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"saved": self.saved, "unchanged": self.unchanged, "errors": self.errors}


def _join(*parts: str) -> str:
    return normalize_path("/".join(p for p in parts if p and p.strip("/")))


def _save(ctx: TenantContext, store: Store, path: str, item: Extracted, origin: str, report: ImportReport) -> None:
    before = sources_mod.get(ctx, store, path)
    saved = sources_mod.save(
        ctx, store, path, title=item.title, content=item.content, type=item.type, url=item.url,
        description=item.description, origin=origin,
    )
    (report.unchanged if before is not None and before.content_hash == saved.content_hash
     else report.saved).append(path)


def import_bytes(ctx: TenantContext, store: Store, filename: str, data: bytes, prefix: str = "",
                 report: ImportReport | None = None) -> ImportReport:
    """Import one uploaded file under ``prefix`` (the path is prefix/name-without-extension)."""
    report = report or ImportReport()
    relative = PurePath(filename.replace("\\", "/"))
    base = _join(prefix, *relative.parent.parts, relative.stem)
    try:
        items = extract_file(relative.name, data)
        for item in items:
            path = _join(base, slug(item.name)) if item.type == "qa" else base
            _save(ctx, store, path, item, str(relative), report)
    except (ExtractionError, SourceError) as exc:
        report.errors.append({"file": str(relative), "error": str(exc)})
    return report


def import_paths(ctx: TenantContext, store: Store, paths: list[str | Path], prefix: str = "") -> ImportReport:
    """Import files and whole folders from disk; folder structure becomes tree paths."""
    report = ImportReport()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*")
                           if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))
            for file in files:
                if file.suffix.lower() not in SUPPORTED:
                    report.errors.append({"file": str(file),
                                          "error": f"'{file.suffix or 'no extension'}' is not supported; skipped."})
                    continue
                import_bytes(ctx, store, str(file.relative_to(path)), file.read_bytes(),
                             _join(prefix, path.name) if prefix else path.name, report)
        elif path.is_file():
            import_bytes(ctx, store, path.name, path.read_bytes(), prefix, report)
        else:
            report.errors.append({"file": str(path), "error": "No such file or folder; check the path."})
    return report


def import_html(ctx: TenantContext, store: Store, path: str, html: str, url: str = "") -> ImportReport:
    """A web page pasted as HTML."""
    report = ImportReport()
    try:
        item = extract_html(html, url)
        _save(ctx, store, path, Extracted(item.title, item.content, "web", url=url), url or "pasted html", report)
    except (ExtractionError, SourceError) as exc:
        report.errors.append({"file": url or "pasted html", "error": str(exc)})
    return report


def import_url(ctx: TenantContext, store: Store, path: str, url: str, timeout: float = 15.0) -> ImportReport:
    """A web page fetched from its URL (when the network allows)."""
    report = ImportReport()
    try:
        _save(ctx, store, path, fetch_url(url, timeout), url, report)
    except (ExtractionError, SourceError) as exc:
        report.errors.append({"file": url, "error": str(exc)})
    return report
