"""The gap backlog's vocabulary, shared by its modules: the entry, its errors, its label, the editor check."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from core.base.errors import UserError
from core.gaps.labels import clean_label
from core.tenancy.context import AuthError, TenantContext

#: The kinds of gap. ``uncovered``: the agent refused or answered only in part. ``not_helpful``: it answered, and the
#: visitor marked the answer unhelpful (answer feedback, :mod:`core.gaps.feedback`). They never merge into each other:
#: the first needs an article that answers, the second an answer that changes, and their replays check just that.
UNCOVERED, NOT_HELPFUL = "uncovered", "not_helpful"
KINDS = (UNCOVERED, NOT_HELPFUL)
KIND_LABELS = {UNCOVERED: "not answered", NOT_HELPFUL: "answered but not helpful"}
UNCHANGED = ("Gap {gap} is an answer marked unhelpful, and no stored question gets another answer from the replay "
             "(the same answer, or none): change the article (or the sources it cites), train, and check again "
             "before closing.")


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
    kind: str = UNCOVERED

    @property
    def is_open(self) -> bool:
        return self.status != "closed"

    @property
    def kind_label(self) -> str:
        return KIND_LABELS.get(self.kind, self.kind)


def stamp(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(timezone.utc).isoformat(timespec="seconds")


def gap_of_row(row: dict) -> Gap:
    """A gap as stored; its label never shows a placeholder (:func:`core.gaps.labels.clean_label`)."""
    languages = tuple(json.loads(row["languages"]))
    label = clean_label(row["label"], languages[0] if languages else "en")
    return Gap(row["id"], label, row["status"], row["article_path"], row["count"], row["first_seen"],
               row["last_seen"], languages, tuple(json.loads(row["channels"])), row["closed_at"], row["closed_by"],
               row.get("kind") or UNCOVERED)


def require_editor(ctx: TenantContext) -> None:
    if not ctx.can("editor"):
        raise AuthError(f"Only an editor or an admin can change the backlog; '{ctx.actor}' is {ctx.role}.")


def gaps_csv(gaps: list[Gap], latest_sample: dict[int, str]) -> str:
    """The backlog as CSV: one row per gap with its latest retained sample."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "label", "status", "count", "first_seen", "last_seen", "languages", "channels",
                     "article_path", "closed_at", "closed_by", "latest_sample", "kind"])
    for gap in gaps:
        writer.writerow([gap.id, gap.label, gap.status, gap.count, gap.first_seen, gap.last_seen,
                         " ".join(gap.languages), " ".join(gap.channels), gap.article_path or "",
                         gap.closed_at or "", gap.closed_by or "", latest_sample.get(gap.id, ""), gap.kind])
    return out.getvalue()
