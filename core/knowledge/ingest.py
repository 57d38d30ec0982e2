"""Importing files, folders, zips and web pages into the source tree (K1).

A folder's structure becomes tree paths; a Q&A file becomes a folder of ``qa`` sources, one per pair.
Every file is stored exactly or refused with a message naming it and what to do, and the rest of the
import goes on; Q&A rows are refused one by one with their line numbers. A path is never overwritten by
another file: the first file of an import to reach a path keeps it, and an existing source is updated
only by a file of the same name (the one it was imported from); anything else is refused.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Callable

from core.base.store import Store
from core.knowledge import sources as sources_mod
from core.knowledge.archives import (
    MAX_FILE_BYTES,
    MAX_ZIP_FILES,
    MAX_ZIP_UNPACKED,
    ArchiveError,
    open_zip,
    read_member,
    unsafe_name,
)
from core.knowledge.extract import SUPPORTED, Extracted, ExtractionError, extract, extract_html, fetch_url
from core.knowledge.sources import Source, SourceError, normalize_path, slug
from core.tenancy.context import TenantContext

_PLACE_HELP = "rename the file, or import it into another folder (--prefix in the CLI, 'Into folder' in the app)"
_ROW_HELP = ("the two questions differ only in case, accents, spaces, punctuation or after their first 60 characters, "
             "so they share a path; reword one of them or merge the two rows, and import the file again")
_NESTED_ZIP = ("is a zip inside a zip, which is not unpacked; unzip it and import its folder, or put its files in the "
               "outer zip")


def _nfc(text: str) -> str:
    """A name as one Unicode form: macOS writes 'ó' as 'o' plus an accent, most other systems as one character."""
    return unicodedata.normalize("NFC", text)


@dataclass
class ImportReport:
    """saved / unchanged paths; errors = files refused ({file, error}); skipped = Q&A rows refused and hidden
    files ({file, line?, reason}); warnings = stored, but check ({file, warning})."""

    saved: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    claimed: dict[str, str] = field(default_factory=dict, repr=False)  # path -> the file (and line) that took it

    def as_dict(self) -> dict:
        return {"saved": self.saved, "unchanged": self.unchanged, "errors": self.errors, "skipped": self.skipped,
                "warnings": self.warnings, "summary": self.summary()}

    def refuse(self, file: str, message: str) -> None:
        named = message.startswith(file) or ("://" in file and file in message)  # a fetch error names its URL
        self.errors.append({"file": file, "error": message if named else f"{file}: {message}"})

    def skip(self, file: str, line: int | None, reason: str) -> None:
        self.skipped.append({"file": file, **({"line": line} if line else {}), "reason": reason})

    def merge(self, other: ImportReport) -> None:
        for name in ("saved", "unchanged", "errors", "skipped", "warnings"):
            getattr(self, name).extend(getattr(other, name))
        self.claimed.update(other.claimed)

    def summary(self) -> str:
        return (f"{len(self.saved)} saved, {len(self.unchanged)} unchanged, {len(self.errors)} refused, "
                f"{len(self.skipped)} skipped, {len(self.warnings)} warning(s)")


def _join(*parts: str) -> str:
    return normalize_path("/".join(p for p in parts if p and p.strip("/")))


def _renamed(message: str, name: str, label: str) -> str:
    """An extractor's message names the bare file; the report names it as the editor knows it."""
    return label + message[len(name):] if message.startswith(name + ":") and name != label else message


def _conflict(existing: Source | None, path: str, origin: str, label: str, report: ImportReport,
              row: bool = False) -> str:
    """Why ``label`` may not be stored at ``path`` ('' when it may)."""
    if path in report.claimed:
        holder = report.claimed[path]
        alike = (" (the two names look the same but write their accents in different Unicode forms, composed and "
                 "decomposed; keep one of the two files)") if holder != label and _nfc(holder) == _nfc(label) else ""
        return (f"would be stored at '{path}', which {holder} already takes in this import{alike}; "
                f"nothing was overwritten: {_ROW_HELP if row else _PLACE_HELP}.")
    if existing is not None and _nfc(existing.origin) != origin:
        held = f"imported from '{existing.origin}'" if existing.origin else "written in the app"
        return (f"would replace the {existing.type} source at '{path}', {held}; nothing was overwritten: "
                f"{_PLACE_HELP}, or delete '{path}' first.")
    return ""


def _place(ctx: TenantContext, store: Store, path: str, item: Extracted, origin: str, label: str,
           report: ImportReport) -> None:
    """Store one item at ``path`` unless another file holds it; a refusal names the file (and the row's line)."""
    where = f"{label} line {item.line}" if item.line else label
    existing = sources_mod.get(ctx, store, path)
    problem = _conflict(existing, path, origin, where, report, row=bool(item.line))
    if not problem:
        try:
            saved = sources_mod.save(ctx, store, path, title=item.title, content=item.content, type=item.type,
                                     url=item.url, description=item.description, origin=origin)
        except SourceError as exc:
            problem = f"was not stored: {exc} ({_PLACE_HELP})"
        else:
            report.claimed[path] = where
            same = existing is not None and existing.content_hash == saved.content_hash
            (report.unchanged if same else report.saved).append(path)
            return
    if item.line:
        report.skip(label, item.line, problem)
    else:
        report.refuse(label, problem)


def import_bytes(ctx: TenantContext, store: Store, filename: str, data: bytes, prefix: str = "",
                 report: ImportReport | None = None, label: str = "") -> ImportReport:
    """Import one file under ``prefix`` (the path is prefix/name-without-extension); ``filename`` is also recorded
    as the source's origin, ``label`` is how messages name the file (default ``filename``)."""
    report = report if report is not None else ImportReport()
    relative = PurePath(filename.replace("\\", "/"))
    label = label or filename
    try:
        base = _join(prefix, *relative.parent.parts, relative.stem)
        if not relative.stem.strip(". "):
            raise SourceError(relative.stem)
    except SourceError:
        report.refuse(label, "the name gives no usable path in the tree; rename the file (letters or digits "
                             "before the extension, no '..') and import it again.")
        return report
    if len(data) > MAX_FILE_BYTES:
        report.refuse(label, f"{len(data):,} bytes, over the import limit of {MAX_FILE_BYTES:,}; split it.")
        return report
    try:
        found = extract(relative.name, data)
    except (ExtractionError, SourceError) as exc:
        report.refuse(label, _renamed(str(exc), relative.name, label))
        return report
    report.warnings += [{"file": label, "warning": _renamed(w, relative.name, label)} for w in found.warnings]
    for line, reason in found.refused_rows:
        report.skip(label, line, reason)
    if found.items and found.items[0].type == "qa" and (base in report.claimed or sources_mod.get(ctx, store, base)):
        holder = report.claimed.get(base) or f"source '{base}'"
        report.refuse(label, f"its Q&A pairs go in folder '{base}', but {holder} is a document there; {_PLACE_HELP}.")
        return report
    origin = _nfc(str(relative))
    for item in found.items:
        _place(ctx, store, _join(base, slug(item.name)) if item.type == "qa" else base, item, origin, label, report)
    return report


def _read(file: Path, label: str, report: ImportReport) -> bytes | None:
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            report.refuse(label, f"{size:,} bytes, over the import limit of {MAX_FILE_BYTES:,}; split it.")
            return None
        return file.read_bytes()
    except OSError as exc:
        report.refuse(label, f"could not be read ({exc.strerror or exc}); check its permissions.")
        return None


def _unfollowed(file: Path, root: Path) -> str:
    """Why a folder entry is not read ('' when it is): a link that leads out of the folder, to a folder or nowhere,
    or something that is no regular file (a pipe would block the import)."""
    if file.is_symlink():
        target = file.resolve()
        if not target.exists():
            return f"is a broken link (to '{target}'); not followed: fix or delete it."
        if target.is_dir():
            return f"is a link to the folder '{target}'; not followed: import that folder by its own path."
        if not target.is_relative_to(root.resolve()):
            return (f"is a link to '{target}', outside the folder; not followed: copy the file into the folder, or "
                    "import it by its own path.")
    elif not file.is_file() and not file.is_dir():
        return "is not a regular file (a pipe, a socket or a device); not read."
    return ""


def _import_folder(ctx: TenantContext, store: Store, root: Path, prefix: str, report: ImportReport) -> None:
    hidden: set[Path] = set()
    folder = _join(prefix, root.name) if prefix else root.name
    entries = sorted(p for p in root.rglob("*") if p.is_symlink() or not p.is_dir())
    for file in entries:
        parts = file.relative_to(root).parts
        dot = next((i for i, part in enumerate(parts) if part.startswith(".")), None)
        if dot is not None:
            if root.joinpath(*parts[:dot + 1]) not in hidden:
                hidden.add(root.joinpath(*parts[:dot + 1]))
                report.skip(str(root.joinpath(*parts[:dot + 1])), None,
                            "is hidden (its name starts with '.'); rename it to import it.")
            continue
        why = _unfollowed(file, root)
        if why:
            report.skip(str(file), None, why)
        elif file.suffix.lower() == ".zip":
            data = _read(file, str(file), report)
            if data is not None:
                import_zip(ctx, store, str(file), data, _join(folder, *parts[:-1]), report)
        elif file.suffix.lower() not in SUPPORTED:
            report.refuse(str(file), f"'{file.suffix or 'no extension'}' is not supported; skipped.")
        else:
            data = _read(file, str(file), report)
            if data is not None:
                import_bytes(ctx, store, str(file.relative_to(root)), data, folder, report, label=str(file))
    if not entries:
        report.refuse(str(root), "the folder holds no files; nothing to import (check the path).")


def import_paths(ctx: TenantContext, store: Store, paths: list[str | Path], prefix: str = "",
                 report: ImportReport | None = None) -> ImportReport:
    """Import files and whole folders from disk; folder structure becomes tree paths."""
    report = report if report is not None else ImportReport()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            _import_folder(ctx, store, path, prefix, report)
        elif path.is_file():
            data = _read(path, str(path), report)
            if data is not None and path.suffix.lower() == ".zip":
                import_zip(ctx, store, str(path), data, prefix, report)
            elif data is not None:
                import_bytes(ctx, store, path.name, data, prefix, report, label=str(path))
        else:
            report.refuse(str(path), "No such file or folder; check the path.")
    return report


def import_zip(ctx: TenantContext, store: Store, name: str, data: bytes, prefix: str = "",
               report: ImportReport | None = None,
               progress: Callable[[int, int, str], None] | None = None) -> ImportReport:
    """A .zip of a folder, member by member (never unpacked to disk): each member is imported like the file of a
    folder import (the zip's top folder is the tree folder) or refused, naming it as ``name:member``.
    ``progress(done, total, member)`` after each member (the admin app's upload bar)."""
    report = report if report is not None else ImportReport()
    try:
        archive = open_zip(data, name, ".zip", "zip the folder again and retry.")
    except ArchiveError as exc:
        report.refuse(name, str(exc))
        return report
    with archive:
        members = sorted((m for m in archive.infolist() if not m.is_dir() and not m.filename.startswith("__MACOSX/")),
                         key=lambda m: m.filename)
        if not members:
            report.refuse(name, "the zip holds no files; nothing to import (zip the folder again).")
            return report
        if len(members) > MAX_ZIP_FILES or sum(m.file_size for m in members) > MAX_ZIP_UNPACKED:
            report.refuse(name, f"too large (at most {MAX_ZIP_FILES} files and {MAX_ZIP_UNPACKED // 1_000_000} MB "
                                "unpacked); split it.")
            return report
        left = MAX_ZIP_UNPACKED
        for done, member in enumerate(members, start=1):
            left -= _zip_member(ctx, store, archive, member, f"{name}:{member.filename}", prefix, left, report)
            if progress is not None:
                progress(done, len(members), member.filename)
    return report


def _zip_member(ctx: TenantContext, store: Store, archive, member, label: str, prefix: str, left: int,
                report: ImportReport) -> int:
    """Import one member of a zip; returns the bytes it unpacked to (counted against the zip's limit)."""
    parts = PurePath(member.filename.replace("\\", "/")).parts
    if unsafe_name(member.filename):
        report.refuse(label, "unsafe path (absolute, or with '..') in the zip; skipped. Zip the folder again "
                             "from inside its parent folder.")
        return 0
    if any(part.startswith(".") for part in parts):
        report.skip(label, None, "is hidden (its name starts with '.'); rename it to import it.")
        return 0
    suffix = PurePath(parts[-1]).suffix.lower()
    if suffix not in SUPPORTED:
        report.refuse(label, _NESTED_ZIP if suffix == ".zip" else f"'{suffix or 'no extension'}' is not supported; "
                                                                  "skipped.")
        return 0
    try:
        data = read_member(archive, member, min(MAX_FILE_BYTES, left), label)
    except ArchiveError as exc:
        report.refuse(label, str(exc))
        return 0
    inner, folder = ("/".join(parts[1:]), _join(prefix, parts[0]) if prefix else parts[0]) if len(parts) > 1 \
        else (parts[0], prefix)
    import_bytes(ctx, store, inner, data, folder, report, label=label)
    return len(data)


def _save_page(ctx: TenantContext, store: Store, path: str, item: Extracted, origin: str) -> ImportReport:
    report = ImportReport()
    try:
        _place(ctx, store, normalize_path(path), item, origin, origin, report)
    except SourceError as exc:
        report.refuse(origin, str(exc))
    return report


def import_html(ctx: TenantContext, store: Store, path: str, html: str, url: str = "") -> ImportReport:
    """A web page pasted as HTML."""
    try:
        item = extract_html(html, url)
    except ExtractionError as exc:
        report = ImportReport()
        report.refuse(url or "pasted html", str(exc))
        return report
    return _save_page(ctx, store, path, Extracted(item.title, item.content, "web", url=url), url or "pasted html")


def import_url(ctx: TenantContext, store: Store, path: str, url: str, timeout: float = 15.0) -> ImportReport:
    """A web page fetched from its URL (when the network allows)."""
    try:
        item = fetch_url(url, timeout)
    except ExtractionError as exc:
        report = ImportReport()
        report.refuse(url, str(exc))
        return report
    return _save_page(ctx, store, path, item, url)
