"""How the pages show text and times: literal markdown, "3 h ago", UTC stamps."""
from __future__ import annotations

from datetime import datetime, timezone


def md(text) -> str:
    """Text shown literally inside markdown (customers and samples hold * _ # < : and the like)."""
    return "".join("\\" + c if c.isascii() and not c.isalnum() and not c.isspace() else c for c in str(text or ""))


def code(text) -> str:
    """Text shown literally inside a markdown code span (`…`, where escapes would show): without backticks."""
    return str(text or "").replace("`", "'")


def sentence(text) -> str:
    """A reason from the core ("the card expired …") as a sentence: capital first, full stop last."""
    text = str(text or "").strip()
    return text[:1].upper() + text[1:] + ("" if text[-1:] in ".!?" else ".") if text else ""


def parse(iso: str | None) -> datetime | None:
    """An ISO time from the store (UTC when it carries no zone)."""
    if not iso:
        return None
    when = datetime.fromisoformat(iso)
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def age_seconds(iso: str | None) -> float:
    when = parse(iso)
    return (datetime.now(timezone.utc) - when).total_seconds() if when else 0.0


def ago(iso: str | None) -> str:
    """"5 min ago", "3 h ago", "2 d ago" ("—" for no time)."""
    if not iso:
        return "—"
    seconds = max(0, int(age_seconds(iso)))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


def stamp(iso: str | None) -> str:
    """"2026-11-30 11:22 UTC" ("—" for no time)."""
    when = parse(iso)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if when else "—"
