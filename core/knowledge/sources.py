"""The source tree (K1): sources addressed by paths, folders implied by paths, CRUD, stars.

Content edits change ``content_hash``; they reach answers only after training. Starring and deleting
act on the next query because retrieval reads both from this table at query time.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from core.base.errors import UserError
from core.base.language import detect, fold
from core.base.store import Store
from core.tenancy.context import TenantContext

TYPES = ("qa", "text", "file", "web")
_SEGMENT_BAD = re.compile(r"[^a-z0-9._-]+")
_COLUMNS = (
    "id, path, title, description, type, starred, language, url, content, content_hash, origin, "
    "created_at, updated_at, trained_at, trained_hash"
)


class SourceError(UserError):
    """Bad input on a source operation; the message says what was wrong and what to do."""


@dataclass(frozen=True)
class Source:
    id: int
    path: str
    title: str
    description: str
    type: str
    starred: bool
    language: str
    url: str
    content: str
    content_hash: str
    origin: str
    created_at: str
    updated_at: str
    trained_at: str | None
    trained_hash: str | None

    @property
    def changed(self) -> bool:
        """True when the content differs from what was last trained (or was never trained)."""
        return self.trained_hash != self.content_hash

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def slug(text: str, max_len: int = 60) -> str:
    """A path segment from free text: folded, lower-case, [a-z0-9._-]."""
    out = _SEGMENT_BAD.sub("-", fold(text)).strip("-.")
    return out[:max_len].rstrip("-.") or "untitled"


def normalize_path(raw: str) -> str:
    """'/Políticas//Devoluciones/' -> 'politicas/devoluciones'. Raises SourceError for an empty path."""
    segments = [slug(s, 80) for s in (raw or "").replace("\\", "/").split("/") if s.strip() and s.strip() != "."]
    if any(s == ".." for s in (raw or "").split("/")):
        raise SourceError(f"Path {raw!r} contains '..'; use a path from the root like 'policies/returns'.")
    if not segments:
        raise SourceError("The path is empty; give one like 'policies/returns/deadline'.")
    return "/".join(segments)


def content_hash(path: str, title: str, type_: str, language: str, url: str, content: str) -> str:
    """Hash of everything that goes into the indexes; a change means 'needs training'."""
    material = "\x1f".join([path, title, type_, language, url, content])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def _row_to_source(row: dict) -> Source:
    return Source(**{**row, "starred": bool(row["starred"])})


def get(ctx: TenantContext, store: Store, path: str) -> Source | None:
    """The source at ``path`` of this tenant, or None."""
    rows = store.query(f"SELECT {_COLUMNS} FROM sources WHERE tenant_id = ? AND path = ?",
                       [ctx.tenant_id, normalize_path(path)])
    return _row_to_source(rows[0]) if rows else None


def get_by_ids(ctx: TenantContext, store: Store, ids: list[int], with_content: bool = True) -> dict[int, Source]:
    """Sources of this tenant by id (missing or foreign ids are simply absent); without ``with_content``
    the content is left empty (retrieval only needs the metadata, and it is read on every query)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    columns = _COLUMNS if with_content else _COLUMNS.replace(" content,", " '' AS content,")
    rows = store.query(f"SELECT {columns} FROM sources WHERE tenant_id = ? AND id IN ({marks})", [ctx.tenant_id, *ids])
    return {row["id"]: _row_to_source(row) for row in rows}


def list_sources(ctx: TenantContext, store: Store, prefix: str = "") -> list[Source]:
    """Every source of this tenant at or below ``prefix``, ordered by path."""
    if not prefix.strip("/ "):
        rows = store.query(f"SELECT {_COLUMNS} FROM sources WHERE tenant_id = ? ORDER BY path", [ctx.tenant_id])
    else:
        base = normalize_path(prefix)
        # a range, not LIKE: it uses the (tenant_id, path) index ('0' is the character after '/')
        rows = store.query(
            f"SELECT {_COLUMNS} FROM sources WHERE tenant_id = ? AND (path = ? OR (path >= ? AND path < ?)) "
            "ORDER BY path",
            [ctx.tenant_id, base, base + "/", base + "0"],
        )
    return [_row_to_source(r) for r in rows]


def _check(path: str, title: str, type_: str, content: str) -> None:
    if type_ not in TYPES:
        raise SourceError(f"Type {type_!r} is not known; use one of {', '.join(TYPES)}.")
    if not title.strip():
        raise SourceError(f"The source at '{path}' needs a title.")
    if not content.strip():
        raise SourceError(f"The source at '{path}' has no content; write some text or import a file with text.")


def _folder_conflict(ctx: TenantContext, store: Store, path: str) -> str | None:
    """A source cannot sit where a folder is, nor below another source."""
    if store.query("SELECT 1 FROM sources WHERE tenant_id = ? AND path >= ? AND path < ? LIMIT 1",
                   [ctx.tenant_id, path + "/", path + "0"]):
        return f"'{path}' is a folder (it has sources below it); choose another path."
    parts = path.split("/")
    for i in range(1, len(parts)):
        parent = "/".join(parts[:i])
        if store.query("SELECT 1 FROM sources WHERE tenant_id = ? AND path = ?", [ctx.tenant_id, parent]):
            return f"'{parent}' is a source, not a folder; a source cannot hold other sources."
    return None


def save(
    ctx: TenantContext,
    store: Store,
    path: str,
    *,
    title: str,
    content: str,
    type: str = "text",
    description: str | None = None,
    language: str = "",
    url: str = "",
    starred: bool | None = None,
    origin: str = "",
    replace: bool = True,
) -> Source:
    """Create the source at ``path``, or (with ``replace``) update the one there. Language is detected when empty;
    ``description=None`` keeps the current one (``""`` clears it)."""
    path = normalize_path(path)
    title, content = title.strip(), content.strip()
    _check(path, title, type, content)
    language = (language or detect(f"{title}\n{content}")).lower()
    digest = content_hash(path, title, type, language, url, content)
    now = store.clock.stamp()
    with store.write() as db:
        existing = get(ctx, store, path)
        if existing is None:
            conflict = _folder_conflict(ctx, store, path)
            if conflict:
                raise SourceError(conflict)
            db.execute(
                "INSERT INTO sources (tenant_id, path, title, description, type, starred, language, url, content, "
                "content_hash, origin, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [ctx.tenant_id, path, title, description or "", type, int(bool(starred)), language, url, content,
                 digest, origin, now, now],
            )
        elif not replace:
            raise SourceError(f"A source already exists at '{path}'; edit it, or choose another path.")
        else:
            db.execute(
                "UPDATE sources SET title = ?, description = ?, type = ?, starred = ?, language = ?, url = ?, "
                "content = ?, "
                "content_hash = ?, origin = ?, updated_at = CASE WHEN content_hash = ? THEN updated_at ELSE ? END "
                "WHERE tenant_id = ? AND id = ?",
                [title, existing.description if description is None else description, type,
                 int(existing.starred if starred is None else starred),
                 language, url, content, digest, origin or existing.origin, digest, now, ctx.tenant_id, existing.id],
            )
    return get(ctx, store, path)  # type: ignore[return-value]


def set_starred(ctx: TenantContext, store: Store, path: str, starred: bool = True) -> Source:
    """Star or un-star a source; effective on the next query, no training needed."""
    source = _require(ctx, store, path)
    with store.write() as db:
        db.execute("UPDATE sources SET starred = ? WHERE tenant_id = ? AND id = ?",
                   [int(starred), ctx.tenant_id, source.id])
    return get(ctx, store, source.path)  # type: ignore[return-value]


def _require(ctx: TenantContext, store: Store, path: str) -> Source:
    source = get(ctx, store, path)
    if source is None:
        raise SourceError(f"No source at '{normalize_path(path)}'. List them with "
                          f"`python -m core sources {ctx.tenant_slug}`.")
    return source


def move(ctx: TenantContext, store: Store, old: str, new: str) -> list[Source]:
    """Move a source, or a whole folder, to a new path. The moved sources need training (their path is indexed)."""
    old, new = normalize_path(old), normalize_path(new)
    if new == old or new.startswith(old + "/"):
        raise SourceError(f"Cannot move '{old}' into itself ('{new}').")
    moving = list_sources(ctx, store, old)
    if not moving:
        raise SourceError(f"Nothing at '{old}' to move.")
    with store.write() as db:
        targets = {s.id: new + s.path[len(old):] for s in moving}
        for source in moving:
            target = targets[source.id]
            if get(ctx, store, target) is not None:
                raise SourceError(f"'{target}' already exists; move or delete it first. Nothing was moved.")
        for source in moving:
            target = targets[source.id]
            digest = content_hash(target, source.title, source.type, source.language, source.url, source.content)
            db.execute(
                "UPDATE sources SET path = ?, content_hash = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
                [target, digest, store.clock.stamp(), ctx.tenant_id, source.id],
            )
        for folder in store.query(
            "SELECT path, description FROM folders WHERE tenant_id = ? AND (path = ? OR (path >= ? AND path < ?))",
            [ctx.tenant_id, old, old + "/", old + "0"],
        ):
            db.execute(
                "UPDATE folders SET path = ? WHERE tenant_id = ? AND path = ?",
                [new + folder["path"][len(old):], ctx.tenant_id, folder["path"]],
            )
    return list_sources(ctx, store, new)


def delete(ctx: TenantContext, store: Store, path: str) -> list[int]:
    """Delete a source or a folder with everything below it; gone from answers at once. Returns the ids."""
    doomed = list_sources(ctx, store, path)
    if not doomed:
        raise SourceError(f"No source or folder at '{normalize_path(path)}'.")
    base = normalize_path(path)
    with store.write() as db:
        for source in doomed:
            db.execute("DELETE FROM sources WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, source.id])
        db.execute("DELETE FROM folders WHERE tenant_id = ? AND (path = ? OR (path >= ? AND path < ?))",
                   [ctx.tenant_id, base, base + "/", base + "0"])
    return [s.id for s in doomed]


def set_folder_description(ctx: TenantContext, store: Store, path: str, description: str) -> None:
    """Describe a folder (shown by browse); the folder itself is implied by the paths below it."""
    path = normalize_path(path)
    if get(ctx, store, path) is not None:
        raise SourceError(f"'{path}' is a source, not a folder; edit the source's description instead.")
    with store.write() as db:
        db.execute(
            "INSERT INTO folders (tenant_id, path, description, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, path) DO UPDATE SET description = excluded.description, "
            "updated_at = excluded.updated_at",
            [ctx.tenant_id, path, description.strip(), store.clock.stamp()],
        )


def folder_descriptions(ctx: TenantContext, store: Store) -> dict[str, str]:
    """Folder path -> description, for this tenant."""
    rows = store.query("SELECT path, description FROM folders WHERE tenant_id = ?", [ctx.tenant_id])
    return {r["path"]: r["description"] for r in rows}


def mark_untrained(ctx: TenantContext, store: Store) -> None:
    """Every source of the tenant counts as changed again (a full retraining starts afresh)."""
    with store.write() as db:
        db.execute("UPDATE sources SET trained_hash = NULL WHERE tenant_id = ?", [ctx.tenant_id])


def mark_trained(ctx: TenantContext, store: Store, trained: list[Source], at: str) -> None:
    """Record the sources' versions as trained at ``at``, each only if nobody edited it since it was read (an
    edit during training stays "changed"). Joins the caller's transaction (training's chunk swap)."""
    with store.write() as db:
        for source in trained:
            db.execute(
                "UPDATE sources SET trained_at = ?, trained_hash = content_hash, trained_title = title, "
                "trained_content = content WHERE tenant_id = ? AND id = ? AND content_hash = ?",
                [at, ctx.tenant_id, source.id, source.content_hash],
            )
