"""The gap backlog's vocabulary, shared by its modules: the entry, its errors, its label, the editor check."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from core.base.errors import UserError
from core.base.language import content_words, fold
from core.tenancy.context import AuthError, TenantContext

LABEL_WORDS = 8


class GapError(UserError):
    """Bad input for a backlog operation; the message says what was wrong and what to do."""


@dataclass(frozen=True)
class Gap:
    id: int
    label: str
    status: str
    article_path: str | None
    count: int
    first_seen: str
    last_seen: str
    languages: tuple[str, ...]
    channels: tuple[str, ...]
    closed_at: str | None = None
    closed_by: str | None = None

    @property
    def is_open(self) -> bool:
        return self.status != "closed"


def stamp(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(timezone.utc).isoformat(timespec="seconds")


def gap_of_row(row: dict) -> Gap:
    return Gap(row["id"], row["label"], row["status"], row["article_path"], row["count"], row["first_seen"],
               row["last_seen"], tuple(json.loads(row["languages"])), tuple(json.loads(row["channels"])),
               row["closed_at"], row["closed_by"])


def topic_label(masked: str, language: str) -> str:
    """A short topic for the gap that outlives its samples: the sample's content words, original case."""
    keep = set(content_words(masked, language))
    out: list[str] = []
    for token in masked.replace("¿", " ").replace("?", " ").split():
        bare = token.strip(".,;:!¡()\"'")
        if bare and fold(bare).lower() in keep and bare not in out:
            out.append(bare)
        if len(out) >= LABEL_WORDS:
            break
    return " ".join(out) or masked[:60]


def require_editor(ctx: TenantContext) -> None:
    if not ctx.can("editor"):
        raise AuthError(f"Only an editor or an admin can change the backlog; '{ctx.actor}' is {ctx.role}.")


def gaps_csv(gaps: list[Gap], latest_sample: dict[int, str]) -> str:
    """The backlog as CSV: one row per gap with its latest retained sample."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "label", "status", "count", "first_seen", "last_seen", "languages", "channels",
                     "article_path", "closed_at", "closed_by", "latest_sample"])
    for gap in gaps:
        writer.writerow([gap.id, gap.label, gap.status, gap.count, gap.first_seen, gap.last_seen,
                         " ".join(gap.languages), " ".join(gap.channels), gap.article_path or "",
                         gap.closed_at or "", gap.closed_by or "", latest_sample.get(gap.id, "")])
    return out.getvalue()
