"""The agent's two verbs over the source tree (K4): ``browse`` one level, ``read`` text.

A browse result or a folder index supports no claim; only text does, so results say whether they
bear text and which chunk ids that text has. A wrong path answers with the paths that do exist at
that depth, closest first. Every call is logged, including those that found nothing.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

from core.base.store import Store
from core.knowledge import sources as sources_mod
from core.knowledge.sources import Source, SourceError, normalize_path
from core.knowledge.training import Index
from core.tenancy import retention
from core.tenancy.context import TenantContext

READ_LIMIT = 12_000
NOT_TRAINED = "not trained yet"


@dataclass
class KnowledgeResult:
    verb: str
    path: str
    found: bool
    text_bearing: bool = False
    kind: str = ""  # folder | document | missing
    message: str = ""
    children: list[dict] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)
    omitted: list[dict] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)

    @property
    def untrained(self) -> list[str]:
        """Paths left out because they are not trained yet (they have no text at all)."""
        return [o["path"] for o in self.omitted if o["why"] == NOT_TRAINED]

    @property
    def chunk_ids(self) -> list[str]:
        return [c["chunk_id"] for d in self.documents for c in d.get("chunks", [])]

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if v not in ([], "")}
        out["found"], out["text_bearing"] = self.found, self.text_bearing
        return out


class Knowledge:
    def __init__(self, index: Index):
        self.index, self.store = index, index.store

    def _tree(self, ctx: TenantContext) -> list[Source]:
        return sources_mod.list_sources(ctx, self.store)

    def _log(self, ctx: TenantContext, result: KnowledgeResult, chars: int) -> None:
        summary = result.message or (f"{len(result.children)} children, {len(result.documents)} documents, "
                                     f"{len(result.omitted)} omitted")
        with self.store.write() as db:
            db.execute(
                "INSERT INTO read_log (tenant_id, at, actor, verb, path, found, returned_ids, returned_chars, summary) "
                "VALUES (?,?,?,?,?,?,?,?,?)",
                [ctx.tenant_id, self.store.clock.stamp(), ctx.actor, result.verb, result.path, int(result.found),
                 json.dumps(result.chunk_ids), chars, summary[:500]],
            )

    def _missing(self, ctx: TenantContext, verb: str, raw: str, tree: list[Source]) -> KnowledgeResult:
        """Not found: the paths that exist at that depth (below the deepest existing folder), closest first."""
        try:
            path = normalize_path(raw)
        except SourceError:
            path = raw
        parts = path.split("/")
        all_paths = [s.path for s in tree]
        parent = ""
        for i in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:i])
            if any(p.startswith(prefix + "/") for p in all_paths):
                parent = prefix
                break
        level = sorted({_child(p, parent) for p in all_paths if not parent or p.startswith(parent + "/")})
        ranked = sorted(level, key=lambda p: -difflib.SequenceMatcher(None, path, p).ratio())
        where = f"in '{parent}'" if parent else "at the top level"
        message = (
            f"Nothing at '{path}'. Paths that exist {where}: "
            f"{', '.join(ranked[:8]) or 'none (the knowledge base is empty)'}. "
            "Browse or read one of those."
        )
        result = KnowledgeResult(verb, path, False, kind="missing", message=message, suggestions=ranked[:8])
        self._log(ctx, result, 0)
        return result

    def browse(self, ctx: TenantContext, path: str = "") -> KnowledgeResult:
        """One level below ``path``: each child's name, description and weight (characters); never content."""
        tree = self._tree(ctx)
        base = "" if not path.strip("/ ") else normalize_path(path)
        below = [s for s in tree if not base or s.path.startswith(base + "/")]
        if base and not below:
            if any(s.path == base for s in tree):
                result = KnowledgeResult("browse", base, True, kind="document",
                                         message=f"'{base}' is a document, not a folder; read it to get its text.")
                self._log(ctx, result, 0)
                return result
            return self._missing(ctx, "browse", path, tree)
        descriptions = sources_mod.folder_descriptions(ctx, self.store)
        children: dict[str, dict] = {}
        for source in below:
            child = _child(source.path, base)
            entry = children.setdefault(child, {
                "name": child.rsplit("/", 1)[-1], "path": child,
                "kind": "document" if child == source.path else "folder",
                "description": source.description if child == source.path else descriptions.get(child, ""),
                "weight": 0, "documents": 0,
            })
            if entry["kind"] == "document":
                entry["title"], entry["type"] = source.title, source.type
            entry["weight"] += len(source.content)
            entry["documents"] += 1
        result = KnowledgeResult("browse", base, True, kind="folder", children=list(children.values()))
        self._log(ctx, result, 0)
        return result

    def read(self, ctx: TenantContext, path: str, limit: int = READ_LIMIT) -> KnowledgeResult:
        """A document's trained text; for a folder, the documents below it up to ``limit`` characters
        plus an index (by path) of what was left out."""
        tree = self._tree(ctx)
        base = normalize_path(path) if path.strip("/ ") else ""
        exact = [s for s in tree if s.path == base]
        below = exact or [s for s in tree if not base or s.path.startswith(base + "/")]
        if not below:
            return self._missing(ctx, "read", path, tree)
        result = KnowledgeResult("read", base, True, kind="document" if exact else "folder")
        used = 0
        for source in below:
            chunks = self.index.chunks_of(ctx, source.id)
            text = _stitch(chunks)
            if not text:
                result.omitted.append({"path": source.path, "title": source.title, "weight": len(source.content),
                                       "why": NOT_TRAINED})
                continue
            if used + len(text) > limit and (result.documents or not exact):
                result.omitted.append({"path": source.path, "title": source.title, "weight": len(text),
                                       "why": "over the limit"})
                continue
            result.documents.append({
                "path": source.path, "title": source.title, "type": source.type, "url": source.url,
                "trained_at": source.trained_at, "text": text,
                "chunks": [{"chunk_id": c.id, "text": c.text} for c in chunks],
            })
            used += len(text)
        result.text_bearing = bool(result.documents)
        result.message = _left_out(result, limit)
        self._log(ctx, result, used)
        return result

    def log(self, ctx: TenantContext, limit: int = 50) -> list[dict]:
        """The latest browse/read calls of this tenant."""
        return self.store.query(
            "SELECT at, actor, verb, path, found, returned_ids, returned_chars, summary FROM read_log "
            "WHERE tenant_id = ? ORDER BY id DESC LIMIT ?", [ctx.tenant_id, limit],
        )


def _left_out(result: KnowledgeResult, limit: int) -> str:
    """What a read left out and why, for a person and for the model alike: a document that is not trained yet
    has no text at all (reading it again cannot help); one over the limit can be read by its own path."""
    untrained = result.untrained
    over = [o["path"] for o in result.omitted if o["why"] != NOT_TRAINED]
    if result.kind == "document" and untrained:
        return (f"'{untrained[0]}' is not trained yet, so it has no text to read or cite; its text becomes readable "
                "after the next training. Search or read other paths meanwhile.")
    parts = []
    if untrained:
        parts.append(f"{len(untrained)} document(s) not trained yet, so without text to read or cite (readable after "
                     f"the next training): {', '.join(untrained[:20])}.")
    if over:
        parts.append(f"{len(over)} document(s) left out over the {limit:,}-character limit; read them one by one by "
                     f"path: {', '.join(over[:20])}.")
    return " ".join(parts)


def _child(path: str, base: str) -> str:
    """The path of the child of ``base`` on the way to ``path``."""
    rest = path[len(base) + 1:] if base else path
    head = rest.split("/", 1)[0]
    return f"{base}/{head}" if base else head


def _stitch(chunks) -> str:
    """A source's trained text back from its chunks, without repeating the overlaps."""
    text, end = "", None
    for chunk in chunks:
        if end is None:
            text, end = chunk.text, chunk.end
            continue
        if chunk.start < end:
            text += chunk.text[end - chunk.start:]
        else:
            text += "\n\n" + chunk.text
        end = max(end, chunk.end)
    return text


def purge_before(ctx: TenantContext, store: Store, cutoff: str) -> dict[str, int]:
    """Retention of the read log: its actor names an identified customer (``customer:<id>``), so it goes with the
    private logs (``core.tenancy.retention``)."""
    with store.write() as db:
        reads = db.execute("DELETE FROM read_log WHERE tenant_id = ? AND at < ?", [ctx.tenant_id, cutoff]).rowcount
    return {"reads": reads}


retention.register(__name__, purge_before)
