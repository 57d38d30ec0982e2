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


def cmd_widget(args, runtime) -> int:
    """The tenant's site key and signing secret (an admin's, as in Settings → Website widget), for the operator
    wiring the widget and signing identified customers' tokens; ``--token ID`` signs one, for trying it out."""
    from urllib.parse import urlsplit

    from core.tenancy import site_keys
    from core.tenancy.context import local_operator

    rt = runtime()
    keys = site_keys.ensure(local_operator(rt.store, args.slug, rt.settings.operator), rt.store)
    base = rt.settings.endpoint_url
    api = f' data-api="{base}"' if urlsplit(base).path.strip("/") else ""
    data = {"tenant": args.slug, "public_key": keys.public_key, "secret": keys.secret, "endpoint": base,
            "snippet": f'<script src="{base}/widget.js" data-site-key="{keys.public_key}"{api} defer></script>',
            "key_rotated_at": keys.key_rotated_at, "secret_rotated_at": keys.secret_rotated_at}
    if args.token:
        data["customer_id"] = args.token.strip()
        data["token"] = site_keys.sign_customer_token(keys.secret, args.token, args.ttl, clock=rt.store.clock.timestamp)
    if args.json:
        return _say(args, data, "")
    if args.token:  # only the token: `TOKEN=$(python -m core widget demo --token alice)`
        print(data["token"])
        return 0
    print(f"Tenant '{args.slug}': the website widget's keys (Settings → Website widget shows the same).\n"
          f"  public site key  {keys.public_key}   (goes into the page: it only names the tenant)\n"
          f"  signing secret   {keys.secret}   (keep it on your backend: it vouches for customers)\n"
          f"  snippet          {data['snippet']}\n\n"
          "An identified customer (who may approve changes on cards) comes with a token your backend signs with "
          "the secret: an HS256 JWT whose 'sub' is the customer id and 'exp' its expiry (at most "
          f"{site_keys.MAX_TOKEN_LIFETIME // 86400} days ahead). Put it on the tag as "
          'data-customer-token="TOKEN"; the widget sends it as X-Customer-Token. In Python (PyJWT):\n'
          '  jwt.encode({"sub": "CUSTOMER_ID", "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")\n'
          f"A token to try it with: python -m core widget {args.slug} --token CUSTOMER_ID [--ttl SECONDS]")
    return 0


def register(add) -> None:
    """Add the ``users`` and ``widget`` commands through ``add(name, func, help)`` of the CLI."""
    p = add("users", cmd_users, f"users: {USAGE}")
    p.epilog = f"usage: {USAGE}"
    p.add_argument("words", nargs="+", metavar="ARG", help="the action (create, list, password, delete, "
                   "instance-admin, sign-out), then its SLUG and/or EMAIL")
    p.add_argument("--role", choices=list(ROLES))
    p.add_argument("--password")
    p.add_argument("--revoke", action="store_true", help="instance-admin: take the role back")
    p = add("widget", cmd_widget, "widget SLUG [--token CUSTOMER_ID [--ttl SECONDS]]: the site key and signing "
            "secret of a tenant's website widget (for signing identified customers' tokens), or one signed token")
    p.add_argument("slug")
    p.add_argument("--token", metavar="CUSTOMER_ID", help="print a customer token signed with the tenant's secret "
                   "(what the business's backend does), for trying an identified widget")
    p.add_argument("--ttl", type=int, default=3600, metavar="SECONDS", help="--token: seconds it stays valid "
                   "(default 3600, at most 7 days)")
