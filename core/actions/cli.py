"""The commands of operations and cards: ``python -m core cards|actions|mcp ...``.

``cards`` lists a tenant's cards and decides one as staff (the operator of the data directory is the tenant's
admin); ``actions`` lists, imports, tests and removes operations and switches them all off; ``mcp`` connects a
tenant's MCP server and sets the kind of its tools. Every refusal is a UserError naming the next step (exit 2);
``cards approve|reject`` exits 1 when the card ended otherwise than asked (expired, refused, failed, decided the
other way).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from core.actions import definitions, switch
from core.actions.model import ActionError, OpKind

CARDS_USAGE = ("python -m core cards SLUG [--status S] [--json] | cards approve SLUG ID [--json] | "
               "cards reject SLUG ID [--json] | cards ledger SLUG [--card ID]")
ACTIONS_USAGE = ("python -m core actions SLUG [--json] | actions import SLUG FILE.json | actions test SLUG NAME "
                 "--params JSON [--dry-run] | actions rm SLUG NAME | actions switch SLUG on|off [--reason TEXT]")
MCP_USAGE = ("python -m core mcp connect SLUG NAME URL [--auth-header H] [--auth-env VAR] | mcp refresh SLUG NAME | "
             "mcp tool SLUG OPNAME --kind read|write | mcp tool SLUG OPNAME --disable | mcp tool SLUG OPNAME --enable")
#: subcommand -> the words after it (the slug included)
CARD_ACTIONS = {"approve": 2, "reject": 2, "ledger": 1}
OP_ACTIONS = {"import": 2, "test": 2, "rm": 2, "switch": 2}
MCP_ACTIONS = {"connect": 3, "refresh": 2, "tool": 2}
#: a decision's outcome -> the exit code of cards approve|reject (0: the card is decided as asked)
_EXIT = {"executed": 0, "rejected": 0}


def _dump(data) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _split(words: list[str], actions: dict[str, int], usage: str, default: str | None) -> tuple[str, list[str]]:
    """(action, its words): ``cards demo`` lists, ``cards approve demo ID`` decides. A first word that names an
    action is one only when the action's words follow (so a tenant called ``ledger`` can still be listed)."""
    if words and words[0] in actions and len(words) > 1:
        action, rest = words[0], words[1:]
    elif default is not None:
        action, rest = default, words
    else:
        raise ActionError(f"Usage: {usage}")
    wanted = actions.get(action, 1)
    if len(rest) != wanted:
        raise ActionError(f"Usage: {usage}")
    return action, rest


def _value(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def preview_lines(preview: list) -> list[str]:
    """A card's preview rows for a terminal: ``label: value``, a state change as ``label: before -> value``."""
    lines = []
    for row in preview or []:
        if not isinstance(row, dict):
            continue
        shown = _value(row.get("value"))
        if "before" in row:
            before = row.get("before")
            shown = f"{_value(before) if before not in (None, '') else '(none)'} -> {shown}"
        lines.append(f"{row.get('label', '')}: {shown}")
    return lines


def print_cards(cards: list[dict], slug: str) -> None:
    """The cards a turn proposed (``Card.event()`` dicts), each with the command that approves it."""
    for card in cards or []:
        print(f"\nCARD {card['id']}: {card.get('title', '')} ({card.get('operation', '')}), {card.get('status', '')}, "
              f"expires {card.get('expires_at', '')}")
        for line in preview_lines(card.get("preview")):
            print(f"  {line}")
        print(f"  approve: python -m core cards approve {slug} {card['id']}\n"
              f"  reject:  python -m core cards reject {slug} {card['id']}")


# == cards =====================================================================================================

def _card_line(card) -> str:
    who = f"customer {card.customer_id}" if card.customer_id else "no customer"
    line = (f"{card.id}  {card.status:<9} {card.operation:<24} {card.title}  ({who}, {card.channel}; "
            f"created {card.created_at}, expires {card.expires_at})")
    if card.reason:
        line += f"\n    reason: {card.reason}"
    return line + "".join(f"\n    {row}" for row in preview_lines(card.preview))


def _decide(args, rt, ctx, card_id: str, approve: bool) -> int:
    decision = rt.actions.decide(ctx, card_id, approve)
    if args.json:
        _dump({"outcome": decision.outcome, "repeated": decision.repeated, **decision.as_dict()})
    else:
        card = decision.card
        again = " (already decided: this is the stored result)" if decision.repeated else ""
        print(f"{card.id}: {decision.outcome}{again} — {card.title} (card status {card.status})")
        if decision.reason:
            print(f"  reason: {decision.reason}")
        if card.result is not None:
            print(f"  result: {_value(card.result)}")
    return _EXIT.get(decision.outcome, 1)


def cmd_cards(args, runtime, context) -> int:
    action, words = _split(list(args.words), CARD_ACTIONS, CARDS_USAGE, "list")
    rt = runtime()
    ctx = context(rt, words[0])
    if action in ("approve", "reject"):
        return _decide(args, rt, ctx, words[1], action == "approve")
    if action == "ledger":
        sys.stdout.write(rt.actions.ledger_csv(ctx, args.card or None))
        return 0
    cards = rt.actions.cards(ctx, status=args.status)
    if args.json:
        _dump([card.as_dict() for card in cards])
        return 0
    for card in cards:
        print(_card_line(card))
    state = f" with status {args.status}" if args.status else ""
    print(f"{len(cards)} card(s){state}." + (f" Approve one: python -m core cards approve {ctx.tenant_slug} ID"
                                              if any(c.status == "proposed" for c in cards) else ""))
    return 0


# == actions ===================================================================================================

def _op_line(op) -> str:
    flags = [str(op.kind), str(op.source), "enabled" if op.enabled else "DISABLED"]
    if op.requires_customer:
        flags.append("identified customers only")
    return f"{op.name:<32} {op.title}  [{', '.join(flags)}]"


def _list_operations(args, rt, ctx) -> int:
    ops = rt.actions.operations(ctx)
    off = rt.actions.stopped(ctx)
    switched = switch.actions_off(ctx, rt.store)  # staff see who switched actions off and why
    if off and switched:
        off += f" (by {switched['changed_by']} at {switched['changed_at']}" + (
            f": {switched['reason']})" if switched["reason"] else ")")
    if args.json:
        _dump({"stopped": off, "operations": [op.as_dict() for op in ops],
               "mcp_servers": definitions.mcp_servers(ctx, rt.store)})
        return 0
    for op in ops:
        print(_op_line(op))
    print(f"{len(ops)} operation(s). " + (f"Actions are OFF: {off}." if off else "Actions are on.")
          + f" Define more: python -m core actions import {ctx.tenant_slug} FILE.json")
    return 0


def _params(raw: str | None) -> dict:
    if raw is None:
        raise ActionError('Give the parameters as a JSON object: --params \'{"order_id": "1001"}\' (or \'{}\').')
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ActionError(f"--params is not JSON ({exc.msg} at character {exc.pos}); give an object such as "
                          '\'{"order_id": "1001"}\'.') from None
    if not isinstance(data, dict):
        raise ActionError('--params must be a JSON object such as \'{"order_id": "1001"}\'.')
    return data


def _test(args, rt, ctx, name: str) -> int:
    params = _params(args.params)
    op = rt.actions.operation(ctx, name)
    if op is None:
        raise ActionError(f"There is no operation {name!r}; list them with `python -m core actions "
                          f"{ctx.tenant_slug}`.")
    if args.dry_run:
        _dump(rt.actions.dry_run(ctx, name, params, args.customer))
        return 0
    if op.kind is not OpKind.READ:
        raise ActionError(f"{name} is a write operation: it runs only through a card a person approves. See the "
                          f"request it would send with --dry-run.")
    done = rt.actions.run_read(ctx, name, params, args.customer)
    if args.json:
        _dump(done.as_dict())
    else:
        print(f"{name}: {done.status}" + (f" — {done.message}" if done.message else ""))
        print(_value(done.body) if done.body is not None else "(no data)")
    return 0 if done.ok else 1


def _switch(args, rt, ctx, state: str) -> int:
    if state not in ("on", "off"):
        raise ActionError(f"Switch actions on or off: python -m core actions switch {ctx.tenant_slug} on|off")
    rt.actions.set_switch(ctx, state == "off", args.reason or "")
    why = rt.actions.stopped(ctx)
    if args.json:
        _dump({"actions": state, "stopped": why})
    elif state == "off":
        print(f"Actions of '{ctx.tenant_slug}' are off: no live read runs, no card is proposed, and no approved "
              "card executes until you switch them on again.")
    else:
        print(f"Actions of '{ctx.tenant_slug}' are on." + (f" They still do not run: {why}." if why else ""))
    return 0


def cmd_actions(args, runtime, context) -> int:
    action, words = _split(list(args.words), OP_ACTIONS, ACTIONS_USAGE, "list")
    rt = runtime()
    ctx = context(rt, words[0])
    if action == "list":
        return _list_operations(args, rt, ctx)
    if action == "import":
        path = Path(words[1])
        if not path.is_file():
            raise ActionError(f"No file {path}; give a JSON file with one action or a list of them.")
        ops = definitions.import_actions(ctx, rt.store, path.read_text(encoding="utf-8"))
        if args.json:
            _dump([op.as_dict() for op in ops])
        else:
            for op in ops:
                print(f"saved {_op_line(op)}")
            print(f"{len(ops)} action(s) saved. Try one: python -m core actions test {ctx.tenant_slug} NAME "
                  "--params '{...}' --dry-run")
        return 0
    if action == "test":
        return _test(args, rt, ctx, words[1])
    if action == "switch":
        return _switch(args, rt, ctx, words[1])
    definitions.delete_action(ctx, rt.store, words[1])
    print(f"Removed the HTTP action {words[1]} (cards already proposed for it are refused when approved).")
    return 0


# == mcp =======================================================================================================

def _connect(args, rt, ctx, name: str, url: str, auth_header: str, auth_value: str, auth_env: str) -> int:
    from core.actions import mcp

    headers = mcp.auth_headers({"server": name, "auth_header": auth_header, "auth_value": auth_value,
                                "auth_env": auth_env}, os.environ)
    tools = mcp.discover(url, headers)
    problems = definitions.connect_mcp(ctx, rt.store, name, url, tools, auth_header, auth_value, auth_env)
    ops = [op for op in definitions.mcp_operations(ctx, rt.store) if op.config.get("server") == name]
    if args.json:
        _dump({"server": name, "url": url, "operations": [op.as_dict() for op in ops], "problems": problems})
        return 0
    for op in ops:
        print(_op_line(op))
    for problem in problems:
        print(f"NOT OFFERED {problem['tool']}: {problem['problem']}")
    print(f"MCP server {name}: {len(ops)} tool(s). Tools without readOnlyHint are write operations (cards); set "
          f"one: python -m core mcp tool {ctx.tenant_slug} OPNAME --kind read")
    return 0


def _tool(args, rt, ctx, op_name: str) -> int:
    chosen = [bool(args.kind), args.disable, args.enable]
    if sum(chosen) != 1:
        raise ActionError(f"Say one thing about the tool: python -m core mcp tool {ctx.tenant_slug} {op_name} "
                          "--kind read|write, or --disable, or --enable.")
    if args.kind:
        definitions.set_tool_override(ctx, rt.store, op_name, kind=OpKind(args.kind))
        done = f"is now a {args.kind} operation" + (" (a card)" if args.kind == "write" else " (live data)")
    else:
        definitions.set_tool_override(ctx, rt.store, op_name, disabled=args.disable)
        done = "is disabled (the agent no longer sees it)" if args.disable else "is enabled"
    if args.json:
        op = rt.actions.operation(ctx, op_name)
        _dump(op.as_dict() if op else {"name": op_name})
    else:
        print(f"{op_name} {done}.")
    return 0


def cmd_mcp(args, runtime, context) -> int:
    action, words = _split(list(args.words), MCP_ACTIONS, MCP_USAGE, None)
    rt = runtime()
    ctx = context(rt, words[0])
    if action == "connect":
        env = args.auth_env or ""
        header = args.auth_header or ("Authorization" if env else "")
        if header and not env:
            raise ActionError("--auth-header needs --auth-env VAR: the environment variable that holds the secret "
                              "(the secret itself is never stored).")
        return _connect(args, rt, ctx, words[1], words[2], header, args.auth_value or "", env)
    if action == "refresh":
        found = next((s for s in definitions.mcp_servers(ctx, rt.store) if s["name"] == words[1]), None)
        if found is None:
            raise ActionError(f"There is no MCP server {words[1]!r} on '{ctx.tenant_slug}'; connect it with "
                              f"python -m core mcp connect {ctx.tenant_slug} {words[1]} URL")
        return _connect(args, rt, ctx, words[1], found["url"], found["auth_header"], found["auth_value"],
                        found["auth_env"])
    return _tool(args, rt, ctx, words[1])


# == registration ==============================================================================================

def closing(func):
    """``func`` with the runtimes it opens closed when it returns (the HTTP client's connections with them)."""
    def run(args, runtime, context) -> int:
        opened = []

        def open_runtime():
            opened.append(runtime())
            return opened[-1]

        try:
            return func(args, open_runtime, context)
        finally:
            for rt in opened:
                rt.close()
    return run


def _explained(p, usage: str, text: str) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = text
    p.epilog = "examples:\n  " + usage.replace(" | ", "\n  python -m core ")


def register(add) -> None:
    """Add ``cards``, ``actions`` and ``mcp`` through ``add(name, func, help)`` of the CLI."""
    p = add("cards", closing(cmd_cards), "confirmation cards: cards SLUG [--status S] | cards approve|reject SLUG "
                                          "ID | cards ledger SLUG [--card ID]")
    _explained(p, CARDS_USAGE, "Without an action, `cards SLUG` lists the tenant's cards, newest first. With one, "
               "the first word is the action:\n  approve SLUG ID   approve the card as staff: the checks run again "
               "and the change runs once\n  reject SLUG ID    reject it: nothing changes\n  ledger SLUG       every "
               "proposal, decision, re-check and result as CSV on stdout (--card ID: one card)\nA repeated approve "
               "or reject answers the stored decision. Exit 1 when the card ended otherwise than asked.")
    p.add_argument("words", nargs="+", metavar="ARG", help="[approve|reject|ledger] SLUG [ID]")
    p.add_argument("--status", help="list: only cards with this status (proposed, executing, executed, failed, "
                   "rejected, expired, refused)")
    p.add_argument("--card", metavar="ID", help="ledger: only this card's rows")
    p = add("actions", closing(cmd_actions), "operations: actions SLUG | actions import SLUG FILE.json | actions "
                                              "test SLUG NAME --params JSON [--dry-run] | actions rm SLUG NAME | "
                                              "actions switch SLUG on|off")
    _explained(p, ACTIONS_USAGE, "Without an action, `actions SLUG` lists the tenant's operations (built-in, HTTP, "
               "MCP) and whether actions are switched off. `test` runs a read operation now (a write one only with "
               "--dry-run: the request it would send, the secret masked, and the current state).")
    p.add_argument("words", nargs="+", metavar="ARG", help="[import|test|rm|switch] SLUG [NAME|FILE|on|off]")
    p.add_argument("--params", help='test: the parameters as a JSON object, e.g. \'{"order_id": "1001"}\'')
    p.add_argument("--dry-run", action="store_true", help="test: only show the request and the state; send nothing")
    p.add_argument("--customer", metavar="ID", help="test: the customer the call is for ({customer_id} in a URL, "
                   "the built-ins' profile)")
    p.add_argument("--reason", help="switch off: why (shown on the Actions page and in refusals)")
    p = add("mcp", closing(cmd_mcp), "MCP servers: mcp connect SLUG NAME URL | mcp refresh SLUG NAME | mcp tool "
                                      "SLUG OPNAME --kind read|write|--disable|--enable")
    _explained(p, MCP_USAGE, "connect lists the server's tools (streamable HTTP) and offers them as operations "
               "named NAME__TOOL: readOnlyHint tools are reads, every other tool a write (a card). refresh lists "
               "them again, keeping your choices. tool sets one tool's kind or switches it off or on.")
    p.add_argument("words", nargs="+", metavar="ARG",
                   help="connect SLUG NAME URL | refresh SLUG NAME | tool SLUG OPNAME")
    p.add_argument("--auth-header", help="connect: the header that carries the secret (default Authorization when "
                   "--auth-env is given)")
    p.add_argument("--auth-value", help='connect: the header\'s value around {secret} (default "Bearer {secret}")')
    p.add_argument("--auth-env", metavar="VAR", help="connect: the environment variable holding the secret (read "
                   "at every call, never stored)")
    p.add_argument("--kind", choices=["read", "write"], help="tool: override the kind")
    p.add_argument("--disable", action="store_true", help="tool: hide it from the agent")
    p.add_argument("--enable", action="store_true", help="tool: offer it again")
