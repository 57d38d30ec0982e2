"""Migrations from 012 on (``core.base.migrations`` lists them after its own, in this order).

Append-only like the first ones: never edit or reorder a released migration, add a new one. Each runs inside
the store's write transaction; use :func:`core.base.rebuilds.run_script` for several statements.
"""
from __future__ import annotations

from typing import Callable

import sqlite_utils


def m012_admin_sessions(db: sqlite_utils.Database) -> None:
    """Admin-app sign-in sessions (core/tenancy/sessions.py): only a hash of each session's random token is kept;
    a session ends when it is revoked (sign-out, a password change, the user removed) or idle or old past the
    lifetimes set by COBERTURA_SESSION_IDLE_MINUTES and COBERTURA_SESSION_HOURS."""
    from core.base.rebuilds import run_script

    run_script(db, """
        CREATE TABLE admin_sessions (
            id INTEGER PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            email TEXT NOT NULL,
            created_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            revoked_at TEXT,
            revoked_why TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX admin_sessions_user ON admin_sessions (user_id)
        """)


def m013_instance_admins(db: sqlite_utils.Database) -> None:
    """The instance administrator flag (sees and creates every tenant of the data dir). On an existing data dir the
    first-run admin gets it: the oldest user who is admin of every tenant that existed when they were created
    (what ``create_first_admin`` made). Nobody else; the CLI grants it (``python -m core users instance-admin``)."""
    from core.base.rebuilds import run_script

    run_script(db, """
        ALTER TABLE users ADD COLUMN instance_admin INTEGER NOT NULL DEFAULT 0;
        UPDATE users SET instance_admin = 1 WHERE id = (
            SELECT u.id FROM users u
            WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.created_at <= u.created_at)
              AND NOT EXISTS (
                SELECT 1 FROM tenants t WHERE t.created_at <= u.created_at AND NOT EXISTS (
                    SELECT 1 FROM memberships m WHERE m.tenant_id = t.id AND m.user_id = u.id AND m.role = 'admin'))
            ORDER BY u.id LIMIT 1)
        """)


def m014_answer_feedback(db: sqlite_utils.Database) -> None:
    """Answer feedback: one rating per turn (👍/👎, an optional reason masked before it is stored), the kind of a gap
    (``uncovered``: refused or partly answered; ``not_helpful``: answered, then marked unhelpful), and how many
    answers cited each source (counted as turns are recorded, so the turns' purge leaves the counts alone; filled
    here from the turns still kept)."""
    from core.base.rebuilds import run_script

    run_script(db, """
        ALTER TABLE gaps ADD COLUMN kind TEXT NOT NULL DEFAULT 'uncovered';
        CREATE TABLE answer_feedback (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            turn_id INTEGER NOT NULL,
            conversation_id TEXT NOT NULL,
            channel TEXT NOT NULL,
            language TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL,
            provider TEXT NOT NULL DEFAULT '',
            rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
            reason TEXT,
            answer TEXT,
            citations TEXT NOT NULL DEFAULT '[]',
            variant_id INTEGER,
            at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (tenant_id, turn_id)
        );
        CREATE INDEX answer_feedback_tenant_variant ON answer_feedback (tenant_id, variant_id);
        CREATE INDEX answer_feedback_tenant_at ON answer_feedback (tenant_id, updated_at);
        CREATE TABLE source_answers (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            answers INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, path)
        );
        INSERT INTO source_answers (tenant_id, path, answers)
            SELECT t.tenant_id, json_extract(c.value, '$.path') AS cited, COUNT(DISTINCT t.id) FROM turns t
            JOIN conversations v ON v.tenant_id = t.tenant_id AND v.id = t.conversation_id, json_each(t.citations) c
            WHERE v.channel != 'sandbox' AND COALESCE(json_extract(c.value, '$.path'), '') != ''
            GROUP BY t.tenant_id, cited
        """)


def m015_qa_case_numbers(db: sqlite_utils.Database) -> None:
    """QA cases are numbered per suite: ``position`` (1, 2, … in the order the cases were added; a deleted case keeps
    its number, so a number never names two cases) is that number, now unique per suite; pages and the CLI show it,
    the global id stays the key runs are compared by. Cases may also check what the answer says: ``facts`` (texts
    it must say) and ``forbidden`` (texts it must not say), JSON lists (core/qa/content.py)."""
    from core.base.rebuilds import run_script

    # the code never gave two cases of a suite one number; should a copied database have done so, the later
    # case takes the suite's next number before the index makes numbers unique
    repeated = db.execute("SELECT c.id, c.tenant_id, c.suite_id FROM qa_cases c WHERE EXISTS (SELECT 1 FROM qa_cases d "
                          "WHERE d.tenant_id = c.tenant_id AND d.suite_id = c.suite_id AND d.position = c.position "
                          "AND d.id < c.id) ORDER BY c.id").fetchall()
    for case_id, tenant_id, suite_id in repeated:
        db.execute("UPDATE qa_cases SET position = (SELECT MAX(position) + 1 FROM qa_cases WHERE tenant_id = ? AND "
                   "suite_id = ?) WHERE id = ?", [tenant_id, suite_id, case_id])
    run_script(db, """
        ALTER TABLE qa_cases ADD COLUMN facts TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE qa_cases ADD COLUMN forbidden TEXT NOT NULL DEFAULT '[]';
        CREATE UNIQUE INDEX qa_cases_number ON qa_cases (tenant_id, suite_id, position)
        """)


_M016_OPERATIONS = """
        CREATE TABLE action_definitions (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            spec TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, name)
        );
        CREATE TABLE mcp_servers (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            url TEXT NOT NULL,
            auth_header TEXT NOT NULL DEFAULT '',
            auth_value TEXT NOT NULL DEFAULT '',
            auth_env TEXT NOT NULL DEFAULT '',
            refreshed_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, name)
        );
        CREATE TABLE mcp_tools (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            server TEXT NOT NULL,
            tool TEXT NOT NULL,
            operation TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            input_schema TEXT NOT NULL DEFAULT '{}',
            read_only INTEGER,
            kind_override TEXT,
            disabled INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, server, tool),
            UNIQUE (tenant_id, operation)
        );
        CREATE TABLE customer_profiles (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            customer_id TEXT NOT NULL,
            email TEXT NOT NULL DEFAULT '',
            name TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, customer_id)
        )
        """
_M016_CARDS = """
        CREATE TABLE cards (
            id TEXT PRIMARY KEY,
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            conversation_id TEXT NOT NULL DEFAULT '',
            customer_id TEXT,
            channel TEXT NOT NULL,
            operation TEXT NOT NULL,
            definition TEXT NOT NULL,
            title TEXT NOT NULL,
            params TEXT NOT NULL,
            preview TEXT NOT NULL,
            snapshot TEXT,
            status TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            result TEXT,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            decided_at TEXT,
            decided_by TEXT
        );
        CREATE INDEX cards_tenant_status ON cards (tenant_id, status, created_at);
        CREATE TABLE card_executions (
            card_id TEXT NOT NULL UNIQUE REFERENCES cards(id) ON DELETE CASCADE,
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            claimed_by TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT
        );
        CREATE TABLE card_ledger (
            id INTEGER PRIMARY KEY,
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            card_id TEXT NOT NULL,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            channel TEXT NOT NULL,
            event TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            detail TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX card_ledger_tenant_card ON card_ledger (tenant_id, card_id, id);
        CREATE TABLE actions_switch (
            tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
            off INTEGER NOT NULL DEFAULT 0,
            reason TEXT NOT NULL DEFAULT '',
            changed_by TEXT NOT NULL DEFAULT '',
            changed_at TEXT NOT NULL
        )
        """


def m016_actions(db: sqlite_utils.Database) -> None:
    """Operations and confirmation cards (core/actions, C1-C4): the tenant's HTTP actions and MCP servers (with the
    admin's per-tool overrides), the customer profiles the built-in operations change, the cards (the frozen
    proposal, its status and stored result), one execution row per card (its UNIQUE card id is the idempotency
    key: one click wins), the ledger of every proposal, decision, re-check and result, and the per-tenant actions
    switch."""
    from core.base.rebuilds import run_script

    run_script(db, _M016_OPERATIONS)
    run_script(db, _M016_CARDS)

_M017_BOOKING = """
        CREATE TABLE booking_schedules (
            tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
            schedule TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            updated_by TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE bookings (
            id TEXT PRIMARY KEY,
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            code TEXT NOT NULL,
            start_utc TEXT NOT NULL,
            end_utc TEXT NOT NULL,
            status TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            email TEXT NOT NULL DEFAULT '',
            phone TEXT NOT NULL DEFAULT '',
            notes TEXT NOT NULL DEFAULT '',
            lang TEXT NOT NULL DEFAULT 'es',
            channel TEXT NOT NULL DEFAULT '',
            conversation_id TEXT NOT NULL DEFAULT '',
            customer_id TEXT,
            idempotency_key TEXT,
            calendar_uid TEXT NOT NULL DEFAULT '',
            calendar_etag TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            cancelled_at TEXT
        );
        CREATE UNIQUE INDEX bookings_tenant_code ON bookings (tenant_id, code);
        CREATE UNIQUE INDEX bookings_tenant_key ON bookings (tenant_id, idempotency_key)
            WHERE idempotency_key IS NOT NULL;
        CREATE INDEX bookings_tenant_start ON bookings (tenant_id, status, start_utc);
        CREATE TABLE booking_holds (
            id TEXT PRIMARY KEY,
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            start_utc TEXT NOT NULL,
            end_utc TEXT NOT NULL,
            status TEXT NOT NULL,
            conversation_id TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            booking_id TEXT,
            ended_at TEXT
        );
        CREATE INDEX booking_holds_tenant_start ON booking_holds (tenant_id, status, start_utc);
        CREATE TABLE booking_blocks (
            id TEXT PRIMARY KEY,
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            start_utc TEXT NOT NULL,
            end_utc TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            created_by TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        );
        CREATE INDEX booking_blocks_tenant_start ON booking_blocks (tenant_id, start_utc);
        CREATE TABLE booking_offers (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            conversation_id TEXT NOT NULL,
            start_utc TEXT NOT NULL,
            end_utc TEXT NOT NULL,
            offered_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, conversation_id, start_utc)
        );
        CREATE TABLE booking_calendars (
            tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            url TEXT NOT NULL,
            username TEXT NOT NULL DEFAULT '',
            password_env TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL,
            updated_by TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE booking_outbox (
            id TEXT PRIMARY KEY,
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            booking_id TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            recipient TEXT NOT NULL,
            subject TEXT NOT NULL,
            body TEXT NOT NULL,
            ics TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            next_attempt_at TEXT NOT NULL,
            created_at TEXT NOT NULL,
            sent_at TEXT
        );
        CREATE INDEX booking_outbox_tenant_status ON booking_outbox (tenant_id, status, next_attempt_at)
        """


def m017_booking(db: sqlite_utils.Database) -> None:
    """Booking (core/booking, B1-B5): the tenant's one schedule, the bookings (a short code customers quote, the
    idempotency key a retried create returns by, the CalDAV uid and ETag when a calendar is connected), holds
    (held -> confirmed | released; expired is read from expires_at, so no sweeper is needed), staff blocks, the
    slots offered per conversation (the phone channel books only those), the connected CalDAV calendar (its secret
    only as the name of an environment variable) and the outbox of confirmation e-mails."""
    from core.base.rebuilds import run_script

    run_script(db, _M017_BOOKING)


MIGRATIONS: list[tuple[str, Callable[[sqlite_utils.Database], None]]] = [
    ("012_admin_sessions", m012_admin_sessions),
    ("013_instance_admins", m013_instance_admins),
    ("014_answer_feedback", m014_answer_feedback),
    ("015_qa_case_numbers", m015_qa_case_numbers),
    ("016_actions", m016_actions),
    ("017_booking", m017_booking),
]
