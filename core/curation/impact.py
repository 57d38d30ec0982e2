"""Impact preview: what an edit, move or delete of a source (or a folder) touches before it is saved.

:func:`impact` lists, for a source path or a folder prefix, of one tenant only:

- the source(s) there and their current trained chunk ids;
- which of those chunks a proposed edit would replace (chunk ids depend on the source, the chunk's
  place and its text, so an edit replaces exactly the chunks whose id is not produced again);
- the recent answered turns that cited them (by chunk id, or by a path at or below ``path``: a turn
  that cited an earlier trained version still names the path);
- the gaps closed (or closed, then reopened) with an article at or below that path;
- the live QA cases that expect a citation of that path, or of a folder holding it, or of a path
  inside the folder (``core.qa.cases_citing``).

Every statement names the tenant in its WHERE clause; another tenant's turns, gaps and cases never
appear. Nothing is written.
"""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from core.base.store import Store
from core.channels import conversations
from core.gaps.backlog import gaps_with_article_at
from core.knowledge import sources as sources_mod
from core.knowledge.sources import Source
from core.knowledge.training import chunk_id, chunk_source, trained_chunks
from core.qa import suites as qa
from core.tenancy.context import TenantContext

RECENT_DAYS = 30
RECENT_TURNS = 200
EXCERPT = 240
#: the fields of a source whose change can change its chunks (the rest is metadata)
CHUNK_FIELDS = ("title", "content", "type")


def _store(target: Any) -> Store:
    """A Runtime (or anything with ``.store``), a ``(store, index)`` pair, or a Store."""
    if isinstance(target, tuple):
        return target[0]
    return getattr(target, "store", target)


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base + "/")


def _scope(ctx: TenantContext, store: Store, base: str) -> tuple[str, list[Source]]:
    """('source' | 'folder' | 'none', the sources at or below ``base``)."""
    source = sources_mod.get(ctx, store, base)
    if source is not None:
        return "source", [source]
    below = sources_mod.list_sources(ctx, store, base)
    return ("folder" if below else "none"), below


def proposed_chunk_ids(source: Source, proposed: dict) -> set[str]:
    """The chunk ids training would store for ``source`` with the ``proposed`` field values."""
    fields = {f: proposed.get(f, getattr(source, f)) for f in CHUNK_FIELDS}
    fields["title"], fields["content"] = str(fields["title"]).strip(), str(fields["content"]).strip()
    edited = replace(source, **fields)
    return {chunk_id(source.id, n, text) for n, (_, _, text) in enumerate(chunk_source(edited))}


def _answers(ctx: TenantContext, store: Store, base: str, chunk_ids: list[str], since: str, limit: int) -> list[dict]:
    rows = conversations.turns_citing(ctx, store, chunk_ids, base, since, limit)
    live = set(chunk_ids)
    out = []
    for row in rows:
        cited = [c for c in json.loads(row["citations"] or "[]")
                 if isinstance(c, dict) and (c.get("id") in live or _within(str(c.get("path") or ""), base))]
        answer = row["answer"] or ""
        out.append({
            "turn_id": row["id"], "conversation_id": row["conversation_id"], "at": row["at"], "status": row["status"],
            "question": row["question"],
            "answer": answer if len(answer) <= EXCERPT else answer[:EXCERPT].rstrip() + "…",
            "cited": [{"id": c.get("id", ""), "path": c.get("path", ""), "title": c.get("title", "")} for c in cited],
        })
    return out


def impact(
    ctx: TenantContext,
    target: Any,
    path: str,
    *,
    proposed: dict | None = None,
    days: int = RECENT_DAYS,
    limit: int = RECENT_TURNS,
    now: datetime | None = None,
) -> dict:
    """What a change at ``path`` (a source, or a folder prefix) touches, for this tenant.

    ``target`` is the runtime (anything with ``.store``), a ``(store, index)`` pair or a Store.
    ``proposed`` holds the edited field values of a single source (title, content, type, ...): only the
    chunks it would replace count as changed. Without it (a move or a delete) every chunk counts.
    Turns are those of the last ``days`` days, at most ``limit`` of them, newest first.

    Returns a dict: ``path``, ``kind`` ('source' | 'folder' | 'none'), ``sources`` (paths),
    ``chunk_ids`` (trained now), ``changed_chunk_ids``, ``answers`` (each: turn_id, conversation_id,
    at, status, question, answer excerpt, cited [{id, path, title}], affected), ``answers_affected``,
    ``gaps`` (id, label, status, article_path, closed_at, count), ``closed_gaps``, ``qa_cases`` (id,
    suite_id, suite, question, expect, cite), ``since``, ``days``, ``limit``.
    """
    store = _store(target)
    base = sources_mod.normalize_path(path)
    kind, scoped = _scope(ctx, store, base)
    trained = trained_chunks(ctx, store, [s.id for s in scoped])
    chunk_ids = [r["id"] for r in trained]
    if proposed is not None and kind == "source":
        keep = proposed_chunk_ids(scoped[0], proposed)
        changed = [cid for cid in chunk_ids if cid not in keep]
    else:
        changed = list(chunk_ids)
    since = ((now or store.clock.now()) - timedelta(days=days)).astimezone(timezone.utc).isoformat(timespec="seconds")
    answers = _answers(ctx, store, base, chunk_ids, since, limit)
    changed_set, live = set(changed), set(chunk_ids)
    for answer in answers:
        ids = {c["id"] for c in answer["cited"]}
        if proposed is None:  # a move or a delete: every answer citing the path is touched
            answer["affected"] = True
        else:  # an answer that cited an earlier trained version (gone already) counts when anything changes
            answer["affected"] = bool(changed_set) and bool(ids & changed_set or ids - live)
    gaps = gaps_with_article_at(ctx, store, base)
    return {
        "path": base, "kind": kind, "sources": [s.path for s in scoped],
        "chunk_ids": chunk_ids, "changed_chunk_ids": changed,
        "answers": answers, "answers_affected": sum(1 for a in answers if a["affected"]),
        "gaps": gaps, "closed_gaps": sum(1 for g in gaps if g["status"] == "closed"),
        "qa_cases": qa.cases_citing(ctx, store, base),
        "since": since, "days": days, "limit": limit,
    }
