"""Command line: ``python -m core <command>``. Run ``python -m core --help`` for the list."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.base.errors import UserError
from core.knowledge import sources as sources_mod
from core.knowledge.sources import SourceError
from core.tenancy.context import CHANNELS, TenancyError, local_caller, local_customer, local_operator
from core.tenancy.tenants import create_tenant, list_tenants


def _print(data, as_json: bool, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2) if as_json else text)


def _runtime():
    from core.runtime import open_runtime

    return open_runtime()


def _ctx(rt, slug: str):
    return local_operator(rt.store, slug, rt.settings.operator)


def cmd_init(args) -> int:
    from core.demo import init_demo

    rt = _runtime()
    report, trained = init_demo(rt, train=not args.no_train, progress=_progress_printer() if not args.json else None)
    data = {"data_dir": str(rt.settings.data_dir), "tenant": "demo", "import": report.as_dict(),
            "train": trained.as_dict() if trained else None}
    _print(data, args.json, f"Data directory: {rt.settings.data_dir}\n"
           f"Demo tenant 'demo': {len(report.saved)} sources saved, "
           f"{len(report.unchanged)} unchanged, {len(report.errors)} errors"
           + (f"; trained {trained.as_dict()}" if trained else "; not trained (run: python -m core train demo)"))
    return 1 if report.errors else 0


def cmd_tenants(args) -> int:
    rt = _runtime()
    if args.action == "create":
        if not args.slug:
            raise TenancyError("Give the tenant's slug: python -m core tenants create SLUG [--name NAME]")
        tenant = create_tenant(rt.store, args.slug, args.name)
        _print(tenant, args.json, f"Created tenant '{tenant['slug']}' ({tenant['name']}).")
        return 0
    tenants = list_tenants(rt.store)
    _print(tenants, args.json,
           "\n".join(f"{t['slug']}\t{t['name']}" for t in tenants) or "No tenants yet: python -m core init")
    return 0


def cmd_ingest(args) -> int:
    from urllib.parse import urlsplit

    from core.knowledge.ingest import ImportReport, import_paths, import_url, import_zip

    rt = _runtime()
    ctx = _ctx(rt, args.slug)
    report = ImportReport()
    for raw in args.paths:
        if raw.startswith(("http://", "https://")):
            parts = urlsplit(raw)
            path = "/".join(x for x in (args.prefix, sources_mod.slug(parts.netloc),
                                        sources_mod.slug(parts.path or "index")) if x)
            report.merge(import_url(ctx, rt.store, path, raw, rt.settings.fetch_timeout))
        elif raw.lower().endswith(".zip") and Path(raw).is_file():
            import_zip(ctx, rt.store, Path(raw).name, Path(raw).read_bytes(), args.prefix, report)
        else:
            import_paths(ctx, rt.store, [raw], args.prefix, report)
    lines = [f"saved {p}" for p in report.saved] + [f"unchanged {p}" for p in report.unchanged]
    lines += [f"REFUSED {e['error']}" for e in report.errors]
    lines += [f"SKIPPED {s['file']}" + (f" line {s['line']}" if s.get("line") else "") + f" {s['reason']}"
              for s in report.skipped]
    lines += [f"WARNING {w['warning']}" for w in report.warnings]
    lines.append(f"{report.summary()}. Train to apply: python -m core train {args.slug}")
    _print(report.as_dict(), args.json, "\n".join(lines))
    return 1 if (report.errors or report.skipped) and not (report.saved or report.unchanged) else 0


def _progress_printer():
    def show(step) -> None:  # a core.knowledge.training_progress.TrainingProgress, one line rewritten in place
        print(f"\r  {step.describe()[:110]:<110}", end="\n" if step.phase == "done" else "", file=sys.stderr,
              flush=True)
    return show


def cmd_train(args) -> int:
    from core.knowledge.training import TrainingBusy
    rt = _runtime()
    ctx, progress = _ctx(rt, args.slug), None if args.json else _progress_printer()
    try:
        report = rt.index.train(ctx, progress=progress, full=args.full)
    except TrainingBusy as busy:  # another process trains this tenant: wait for it, then train what is left
        if args.wait <= 0:
            raise
        print(f"waiting up to {args.wait:g} s: {busy}", file=sys.stderr)
        report = rt.index.train(ctx, progress=progress, full=args.full, wait=args.wait)
    _print(report.as_dict(), args.json, json.dumps(report.as_dict()))
    return 0


def cmd_sources(args) -> int:
    rt = _runtime()
    items = sources_mod.list_sources(_ctx(rt, args.slug), rt.store, args.path or "")
    data = [{"path": s.path, "title": s.title, "type": s.type, "starred": s.starred, "language": s.language,
             "chars": len(s.content), "changed": s.changed, "trained_at": s.trained_at} for s in items]
    text = "\n".join(f"{'*' if s.starred else ' '} {s.type:<4} {s.language:<2} "
                     f"{'changed ' if s.changed else 'trained '} {s.path}  — {s.title}" for s in items)
    _print(data, args.json, text or "No sources.")
    return 0


def _batch(path: str, field: str):
    """(item, item[field]) for each non-empty line of a JSONL batch file; a bad line says which and why."""
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            yield item, item[field]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise SourceError(f"{path}: line {number} must be a JSON object with 'id' and '{field}'.") from None


def cmd_search(args) -> int:
    rt = _runtime()
    ctx = _ctx(rt, args.slug)
    if args.batch:
        out = sys.stdout
        for item, query in _batch(args.batch, "query"):
            result = rt.retriever.search(ctx, query, k=args.k)
            out.write(json.dumps({"id": item.get("id"), "results": [h.as_dict() for h in result.hits]},
                                 ensure_ascii=False) + "\n")
        return 0
    if not args.query:
        raise SourceError("Give a query: python -m core search SLUG \"question\"")
    result = rt.retriever.search(ctx, args.query, k=args.k)
    if args.json:
        print(json.dumps([h.as_dict() for h in result.hits], ensure_ascii=False, indent=2))
        return 0
    print(f"query: {result.rewritten}  [{result.language}]  {result.seconds * 1000:.0f} ms")
    for n, hit in enumerate(result.hits, start=1):
        snippet = hit.text[:160].replace("\n", " ")
        print(f"{n}. [{hit.chunk_id}] {hit.path} ({hit.type}{', starred' if hit.starred else ''}) "
              f"score {hit.score:.3f}\n   {snippet}")
    if not result.hits:
        print("No chunk supports this question well enough.")
    return 0


def cmd_ask(args) -> int:
    from core.actions.cli import print_cards
    from core.agent.factory import make_agent

    rt = _runtime()  # --customer / --phone: as that identified customer / phone caller, like a signed token
    ctx = (local_customer(rt.store, args.slug, args.customer, rt.settings.operator) if args.customer else
           local_caller(rt.store, args.slug, args.phone, rt.settings.operator) if args.phone else _ctx(rt, args.slug))
    agent, channel = make_agent(rt, ctx=ctx), ctx.channel if args.customer or args.phone else args.channel

    def one(question: str, conversation: str | None) -> dict:
        return rt.turns.run(ctx, agent, question, conversation_id=conversation, channel=channel).as_dict()

    if args.batch:
        for item, question in _batch(args.batch, "question"):
            try:
                out = {"id": item.get("id"), **one(question, item.get("conversation"))}
            except UserError as exc:
                out = {"id": item.get("id"), "status": "error", "error": str(exc)}
            print(json.dumps(out, ensure_ascii=False))
        return 0
    if not args.question:
        raise SourceError('Give a question: python -m core ask SLUG "question"')
    data = one(args.question, args.conversation)
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(f"[{data['status']}] {data['answer']}")
        for n, citation in enumerate(data["citations"], start=1):
            print(f"  [{n}] {citation['path']} — {citation['title']}")
        print_cards(data.get("cards") or [], args.slug)
        print(f"conversation: {data['conversation_id']}  (continue with --conversation {data['conversation_id']})")
    return 0


def cmd_browse(args) -> int:
    rt = _runtime()
    result = rt.knowledge.browse(_ctx(rt, args.slug), args.path or "")
    if args.json:
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
    elif not result.found:
        print(f"error: {result.message}", file=sys.stderr)
    elif result.kind == "document":
        print(result.message)
    else:
        for child in result.children:
            print(f"{'[dir]' if child['kind'] == 'folder' else '     '} {child['path']:<40} "
                  f"{child['weight']:>7} chars  {child['description']}")
    return 0 if result.found else 1


def cmd_read(args) -> int:
    rt = _runtime()
    result = rt.knowledge.read(_ctx(rt, args.slug), args.path)
    if args.json:
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
        return 0 if result.found else 1
    for doc in result.documents:
        print(f"== {doc['path']} — {doc['title']} (trained {doc['trained_at']})\n{doc['text']}\n")
    hint = f" Train with `python -m core train {args.slug}`." if result.untrained else ""
    if not result.found or (result.untrained and not result.documents):  # nothing to read: say what to do
        print(f"error: {result.message}{hint}", file=sys.stderr)
        return 1
    if result.message:
        print(result.message + hint)
    return 0


def cmd_preview(args) -> int:
    from core.knowledge.training import chunk_source, source_units

    rt = _runtime()
    source = sources_mod.get(_ctx(rt, args.slug), rt.store, args.path)
    if source is None:
        raise SourceError(f"No source at '{args.path}'. List them with `python -m core sources {args.slug}`.")
    chunks = [{"ordinal": n, "start": a, "end": b, "chars": b - a, "text": t}
              for n, (a, b, t) in enumerate(chunk_source(source))]
    for left, right in zip(chunks, chunks[1:]):
        left["overlap_with_next"] = max(0, left["end"] - right["start"])
    units = source_units(source)
    for chunk in chunks:
        chunk["units"] = [u["kind"] for u in units if u["start"] < chunk["end"] and u["end"] > chunk["start"]]
    data = {"path": source.path, "title": source.title, "type": source.type, "language": source.language,
            "changed_since_training": source.changed, "extracted_text": source.content, "units": units,
            "chunks": chunks}
    text = (f"== {source.path} — {source.title} ({source.type}, {source.language}, "
            f"{'changed since training' if source.changed else 'trained'})\n")
    text += f"-- extracted text ({len(source.content)} chars) --\n{source.content}\n"
    for chunk in chunks:
        text += (f"-- chunk {chunk['ordinal']}: chars {chunk['start']}-{chunk['end']} ({chunk['chars']}), "
                 f"overlap with next {chunk.get('overlap_with_next', 0)}, units: {', '.join(chunk['units'])} --\n"
                 f"{chunk['text']}\n")
    _print(data, args.json, text)
    return 0


def cmd_star(args) -> int:
    rt = _runtime()
    source = sources_mod.set_starred(_ctx(rt, args.slug), rt.store, args.path, args.command == "star")
    print(f"{source.path}: {'starred' if source.starred else 'not starred'} (effective on the next answer)")
    return 0


def cmd_rm(args) -> int:
    rt = _runtime()
    ctx = _ctx(rt, args.slug)
    ids = sources_mod.delete(ctx, rt.store, args.path)
    rt.index.forget(ctx, ids)
    print(f"Deleted {len(ids)} source(s) under '{args.path}'.")
    return 0


def cmd_mv(args) -> int:
    rt = _runtime()
    from core.curation.relocation import move

    moved = move(_ctx(rt, args.slug), rt, args.old, args.new)
    follow = (f" {moved.gaps} closed gap(s) and {moved.qa_cases} QA case(s) now point at it."
              if moved.gaps or moved.qa_cases else "")
    print(f"Moved {len(moved.sources)} source(s) to '{args.new}'.{follow} "
          f"Train to apply: python -m core train {args.slug}")
    return 0


def cmd_folder(args) -> int:
    rt = _runtime()
    sources_mod.set_folder_description(_ctx(rt, args.slug), rt.store, args.path, args.description)
    print(f"Described folder '{args.path}'.")
    return 0


def cmd_status(args) -> int:
    rt = _runtime()
    status = rt.index.status(_ctx(rt, args.slug))
    _print(status, args.json, "  ".join(f"{k}={v}" for k, v in status.items()))
    return 0


def _setup_commands(add) -> None:
    """Data dir, tenants and users."""
    p = add("init", cmd_init, "create the data dir, the schema and the trained demo tenant (idempotent)")
    p.add_argument("--no-train", action="store_true")
    p = add("tenants", cmd_tenants, "list tenants, or: tenants create SLUG [--name NAME]")
    p.add_argument("action", nargs="?", choices=["list", "create"], default="list")
    p.add_argument("slug", nargs="?")
    p.add_argument("--name")
    from core.tenancy import cli as users_cli  # users create|list|password|delete|instance-admin|sign-out

    users_cli.register(lambda name, func, help_: add(name, lambda args: func(args, _runtime), help_))


def _knowledge_commands(add) -> None:
    """Import, train, list and search the tree."""
    p = add("ingest", cmd_ingest, "import files, folders and web pages (http(s) URLs) into a tenant's tree")
    p.add_argument("slug")
    p.add_argument("paths", nargs="+")
    p.add_argument("--prefix", default="")
    p = add("train", cmd_train, "index what changed since the last training")
    p.add_argument("slug")
    p.add_argument("--full", action="store_true", help="retrain every source (after changing the embedder)")
    p.add_argument("--wait", type=float, default=600.0, metavar="SECONDS",
                   help="if another process is training this tenant, wait this long for it (0 = fail at once)")
    p = add("sources", cmd_sources, "list a tenant's sources (optionally below PATH)")
    p.add_argument("slug")
    p.add_argument("path", nargs="?")
    p = add("search", cmd_search, "hybrid search; --batch FILE.jsonl for many queries")
    p.add_argument("slug")
    p.add_argument("query", nargs="?")
    p.add_argument("--k", type=int, default=6)
    p.add_argument("--batch")
    p = add("ask", cmd_ask, "ask the agent (offline responder unless a provider is configured)")
    p.add_argument("slug")
    p.add_argument("question", nargs="?")
    p.add_argument("--channel", default="web", choices=list(CHANNELS))
    who = p.add_mutually_exclusive_group()
    who.add_argument("--customer", metavar="ID", help="ask as this identified customer (channel identified): write "
                     "operations are offered, a proposed change prints as a card with its approve command")
    who.add_argument("--phone", metavar="CALLER", help="ask as this phone caller (channel phone), like a voice gateway")
    p.add_argument("--conversation", help="continue this conversation (follow-ups are rewritten from it)")
    p.add_argument("--batch", help="JSONL of {id, question, conversation?}; one result per line")
    p = add("status", cmd_status, "counts of sources, changed sources and indexed chunks")
    p.add_argument("slug")


def _tree_commands(add) -> None:
    """The agent's verbs and the editor's operations on paths."""
    for name, func, help_ in (("browse", cmd_browse, "one level of the tree"),
                              ("read", cmd_read, "the text of a document or folder"),
                              ("preview", cmd_preview,
                               "exactly the text extracted from a source and how it is chunked"),
                              ("star", cmd_star, "star a source (effective on the next answer)"),
                              ("unstar", cmd_star, "unstar a source (effective on the next answer)"),
                              ("rm", cmd_rm, "delete a source or folder (effective at once)")):
        p = add(name, func, help_)
        p.add_argument("slug")
        p.add_argument("path", nargs="?" if name == "browse" else None)
    p = add("mv", cmd_mv, "move a source or folder")
    p.add_argument("slug")
    p.add_argument("old")
    p.add_argument("new")
    p = add("folder", cmd_folder, "describe a folder")
    p.add_argument("slug")
    p.add_argument("path")
    p.add_argument("description")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="Cobertura knowledge core. Data dir: "
                                     "$COBERTURA_DATA_DIR (default ./data).")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, func, help_):
        p = sub.add_parser(name, help=help_)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        return p

    _setup_commands(add)
    _knowledge_commands(add)
    _tree_commands(add)
    from core.gaps import cli as gaps_cli
    from core.qa import cli as qa_cli

    gaps_cli.register(lambda name, func, help_: add(name, lambda args: func(args, _runtime, _ctx), help_))
    qa_cli.register(lambda name, func, help_: add(name, lambda args: func(args, _runtime, _ctx), help_))
    from core.actions import cli as actions_cli  # cards, actions, mcp

    actions_cli.register(lambda name, func, help_: add(name, lambda args: func(args, _runtime, _ctx), help_))
    from core.booking import cli as booking_cli  # availability, book, bookings, blocks, outbox, ...

    booking_cli.register(lambda name, func, help_: add(name, lambda args: func(args, _runtime, _ctx), help_))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except UserError as exc:  # every error a person can fix says what to do; anything else is a fault of ours
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
