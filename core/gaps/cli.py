"""The backlog's commands: ``python -m core gaps ...`` and ``python -m core purge``."""
from __future__ import annotations

import json
import sys

from core.gaps import relabeling
from core.gaps.backlog import STATUSES, GapError

PURGED_LABELS = {"samples": "gap samples", "turns": "turns", "questions": "logged questions",
                 "conversations": "idle conversations", "transcripts": "handoff transcripts",
                 "feedback": "feedback texts"}


def _dump(data) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _row(gap) -> dict:
    return {"id": gap.id, "label": gap.label, "status": gap.status, "count": gap.count, "first_seen": gap.first_seen,
            "last_seen": gap.last_seen, "languages": list(gap.languages), "channels": list(gap.channels),
            "article_path": gap.article_path, "kind": gap.kind}


def _list(args, backlog, ctx) -> int:
    gaps = backlog.gaps(ctx, status=args.status, language=args.language, channel=args.channel)
    if args.json:
        _dump([_row(g) for g in gaps])
    else:
        for g in gaps:
            article = f"  -> {g.article_path}" if g.article_path else ""
            print(f"#{g.id:<5} {g.count:>4}x  {g.status:<8} {','.join(g.languages):<8} {g.label}{article}")
        print(f"{len(gaps)} gaps")
    return 0


def _show(args, backlog, ctx, gap_id: int) -> int:
    gap = backlog.require(ctx, gap_id)
    data = {**_row(gap), "samples": backlog.samples(ctx, gap.id), "history": backlog.history(ctx, gap.id)}
    if args.json:
        _dump(data)
    else:
        print(f"#{gap.id} {gap.label} — {gap.status}, asked {gap.count}x ({gap.first_seen} .. {gap.last_seen})")
        for s in data["samples"]:
            print(f"  {s['at']} [{s['language']}/{s['channel']}] {s['sample'] or '(sample purged by retention)'}")
        for h in data["history"]:
            print(f"  history {h['at']} {h['event']} by {h['actor']} {h['article_path'] or ''}")
    return 0


def _close(args, rt, ctx, gap_id: int) -> int:
    backlog = rt.backlog
    if not args.article:
        raise GapError("Close a gap with the article that answers it: --article PATH (a source path).")
    from core.gaps.replay import replay_gap

    backlog.require(ctx, gap_id)
    replay = replay_gap(ctx, rt, gap_id, args.article)
    answered = sum(r["answered"] for r in replay)
    if not args.json:
        for r in replay:
            said = ("changed" if r["changed"] else "SAME answer") if "changed" in r else (
                "answered" if r["answered"] else "NOT answered")
            print(f"  {said:<12} {r['sample']}" + (f"  (cites {', '.join(r['citations'])})" if r["citations"] else ""))
        print(f"replay: {answered} of {len(replay)} stored samples are now answered"
              + (f", {sum(bool(r.get('changed')) for r in replay)} differently from the answer marked unhelpful"
                 if any("changed" in r for r in replay) else ""))
    if args.dry_run:
        if args.json:
            _dump({"replay": replay, "closed": False})
        return 0
    gap = backlog.close(ctx, gap_id, args.article, replay)
    if args.json:
        _dump({**_row(gap), "replay": replay, "closed": True})
    else:
        print(f"closed #{gap.id} with {gap.article_path}")
    return 0


def _relabel(args, backlog, ctx) -> int:
    """Labels made before placeholders and their cues were kept out, recomputed (core/gaps/relabeling.py)."""
    changes = relabeling.relabel(ctx, backlog, apply=not args.dry_run)
    if args.json:
        _dump({"changes": changes, "applied": not args.dry_run})
        return 0
    for change in changes:
        print(f"#{change['id']}: {change['old']!r} -> {change['new']!r}")
    done = "would be relabelled (dry run)" if args.dry_run else "relabelled"
    print(f"{len(changes)} gap(s) {done}; gaps an editor renamed, and those with no sample left, keep their label.")
    return 0


def cmd_gaps(args, runtime, context) -> int:
    words = list(args.words)
    action = words.pop(0) if words and words[0] in ("list", "show", "close", "reopen", "merge", "export",
                                                    "relabel") else "list"
    if not words:
        raise GapError("Name the tenant: python -m core gaps SLUG [--status open] [--json]")
    rt = runtime()
    ctx = context(rt, words.pop(0))
    backlog = rt.backlog
    if action == "list":
        return _list(args, backlog, ctx)
    if action == "relabel":
        return _relabel(args, backlog, ctx)
    if not words:
        raise GapError(f"Give the gap id: python -m core gaps {action} {ctx.tenant_slug} GAP_ID")
    gap_id = int(words.pop(0))
    if action == "show":
        return _show(args, backlog, ctx, gap_id)
    if action == "close":
        return _close(args, rt, ctx, gap_id)
    if action == "reopen":
        gap = backlog.reopen(ctx, gap_id)
    elif action == "merge":
        if not words:
            raise GapError("Name the gaps to fold in: python -m core gaps merge SLUG TARGET_ID OTHER_ID...")
        gap = backlog.merge(ctx, gap_id, [int(w) for w in words])
    else:
        raise GapError(f"Unknown gaps action {action!r}.")
    _dump(_row(gap)) if args.json else print(f"#{gap.id} {gap.status}, asked {gap.count}x: {gap.label}")
    return 0


def cmd_gaps_export(args, runtime, context) -> int:
    rt = runtime()
    sys.stdout.write(rt.backlog.export_csv(context(rt, args.slug)))
    return 0


def cmd_purge(args, runtime, context) -> int:
    rt = runtime()
    purged = rt.backlog.purge_all()
    if args.json:
        _dump(purged)
        return 0
    for slug, counts in purged.items():
        print(f"{slug}: purged " + ", ".join(f"{n} {PURGED_LABELS.get(what, what)}" for what, n in counts.items()))
    if not purged:
        print("no tenants")
    return 0


def register(add) -> None:
    """Add the backlog's subcommands through ``add(name, func, help)`` of the CLI."""
    p = add("gaps", cmd_gaps, "the gap backlog: gaps SLUG | gaps show SLUG ID | gaps close SLUG ID --article PATH "
                              "| gaps reopen SLUG ID | gaps merge SLUG TARGET OTHER... | gaps relabel SLUG [--dry-run]")
    p.add_argument("words", nargs="+", metavar="[action] SLUG [GAP_ID ...]")
    p.add_argument("--status", choices=STATUSES)
    p.add_argument("--language")
    p.add_argument("--channel")
    p.add_argument("--article", help="close: the source path of the article that answers the gap")
    p.add_argument("--dry-run", action="store_true", help="close: only replay the samples, do not close; relabel: "
                                                          "only list the labels that would change")
    p = add("gaps-export", cmd_gaps_export, "the backlog as CSV on stdout")
    p.add_argument("slug")
    p = add("purge", cmd_purge, "delete gap samples and private logs (turns, logged questions, handoff transcripts) "
                                "older than each tenant's retentions (gap entries and counts stay)")
