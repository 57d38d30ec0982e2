"""The user commands: ``python -m core users create|list|password|delete|instance-admin|sign-out ...``.

The operator (whoever runs commands on the data directory) manages accounts here; a password change, a
deletion and ``sign-out`` end the user's admin-app sessions at once (their cookies stop working).
"""
from __future__ import annotations

import getpass
import json
import sys

from core.base.errors import UserError
from core.tenancy import instance, sessions, tenants
from core.tenancy.context import ROLES

USAGE = ("python -m core users create SLUG EMAIL --role admin|editor|qa [--password P] | users list | "
         "users password EMAIL [--password P] | users delete EMAIL | users instance-admin EMAIL [--revoke] | "
         "users sign-out EMAIL")
#: action -> the words it takes after it
ARITY = {"create": 2, "list": 0, "password": 1, "delete": 1, "instance-admin": 1, "sign-out": 1}


def _password(args, email: str) -> str:
    if args.password:
        return args.password
    return getpass.getpass(f"Password for {email}: ") if sys.stdin.isatty() else ""


def _say(args, data, text: str) -> int:
    print(json.dumps(data, ensure_ascii=False, indent=2) if args.json else text)
    return 0


def _describe(user: dict) -> str:
    roles = ", ".join(f"{t['slug']} ({t['role']})" for t in user["tenants"]) or "no tenant"
    return f"{user['email']}\t{'instance admin; ' if user['instance_admin'] else ''}{roles}"


def cmd_users(args, runtime) -> int:
    action, words = args.words[0], args.words[1:]
    if action not in ARITY or len(words) != ARITY[action]:
        raise UserError(f"Usage: {USAGE}")
    if action == "create" and not args.role:
        raise UserError(f"users create needs --role ({'|'.join(ROLES)}).")
    rt = runtime()
    if action == "list":
        users = tenants.list_users(rt.store)
        return _say(args, users, "\n".join(map(_describe, users)) or "No users yet: start the admin app "
                                                                    "(streamlit run app.py) to create the first admin.")
    if action == "create":
        slug, email = words
        user = tenants.create_user(rt.store, slug, email, _password(args, email), args.role)
        return _say(args, user, f"{user['email']} is {user['role']} of '{user['tenant']}'.")
    email = words[0].strip().lower()
    if action == "password":
        ended = sessions.reset_password(rt.store, email, _password(args, email))
        return _say(args, {"email": email, "sessions_ended": ended},
                    f"New password set for {email}; {ended} admin-app session(s) ended.")
    if action == "delete":
        tenants.delete_user(rt.store, email)
        return _say(args, {"email": email, "deleted": True}, f"Deleted {email} and their sessions.")
    if action == "sign-out":
        ended = sessions.revoke_user(rt.store, email, "signed out by the operator")
        return _say(args, {"email": email, "sessions_ended": ended}, f"{ended} admin-app session(s) of {email} ended.")
    instance.grant(rt.store, email, not args.revoke)
    return _say(args, {"email": email, "instance_admin": not args.revoke},
                f"{email} {'is no longer' if args.revoke else 'is now'} instance admin "
                "(sees every tenant, creates tenants).")


def register(add) -> None:
    """Add the ``users`` command through ``add(name, func, help)`` of the CLI."""
    p = add("users", cmd_users, f"users: {USAGE}")
    p.epilog = f"usage: {USAGE}"
    p.add_argument("words", nargs="+", metavar="ARG", help="the action (create, list, password, delete, "
                   "instance-admin, sign-out), then its SLUG and/or EMAIL")
    p.add_argument("--role", choices=list(ROLES))
    p.add_argument("--password")
    p.add_argument("--revoke", action="store_true", help="instance-admin: take the role back")
