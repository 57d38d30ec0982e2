"""The database schema as named, append-only migrations (applied in order by :meth:`core.store.Store.migrate`).

Never edit or reorder a released migration: add a new one. Each runs inside the store's write
transaction, statement by statement.
"""
from __future__ import annotations

from typing import Callable

import sqlite_utils

from core.base import later_migrations, rebuilds
from core.base.rebuilds import run_script as _run_script


def _m001_tenancy(db: sqlite_utils.Database) -> None:
    _run_script(
        db,
        """
        CREATE TABLE tenants (
            id INTEGER PRIMARY KEY,
            slug TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE users (
            id INTEGER PRIMARY KEY,
            email TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE memberships (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('admin', 'editor', 'qa')),
            PRIMARY KEY (tenant_id, user_id)
        );
        """
    )


def _m002_knowledge(db: sqlite_utils.Database) -> None:
    _run_script(
        db,
        """
        CREATE TABLE sources (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            title TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            type TEXT NOT NULL CHECK (type IN ('qa', 'text', 'file', 'web')),
            starred INTEGER NOT NULL DEFAULT 0,
            language TEXT NOT NULL DEFAULT '',
            url TEXT NOT NULL DEFAULT '',
            content TEXT NOT NULL DEFAULT '',
            content_hash TEXT NOT NULL,
            origin TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            trained_at TEXT,
            trained_hash TEXT,
            trained_title TEXT,
            trained_content TEXT,
            UNIQUE (tenant_id, path)
        );
        CREATE INDEX sources_tenant_path ON sources (tenant_id, path);
        CREATE TABLE folders (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, path)
        );
        CREATE TABLE chunks (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            source_id INTEGER NOT NULL,
            ordinal INTEGER NOT NULL,
            start INTEGER NOT NULL,
            end INTEGER NOT NULL,
            text TEXT NOT NULL,
            trained_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, id)
        );
        CREATE INDEX chunks_tenant_source ON chunks (tenant_id, source_id, ordinal);
        CREATE TABLE read_log (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            verb TEXT NOT NULL,
            path TEXT NOT NULL,
            found INTEGER NOT NULL,
            returned_ids TEXT NOT NULL,
            returned_chars INTEGER NOT NULL,
            summary TEXT NOT NULL
        );
        CREATE INDEX read_log_tenant_at ON read_log (tenant_id, at);
        """
    )


def _m003_conversations(db: sqlite_utils.Database) -> None:
    _run_script(
        db,
        """
        CREATE TABLE conversations (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            channel TEXT NOT NULL,
            customer_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            uncovered INTEGER NOT NULL DEFAULT 0,
            handed_off INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, id)
        );
        CREATE TABLE turns (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            at TEXT NOT NULL,
            question TEXT NOT NULL,
            status TEXT NOT NULL,
            answer TEXT NOT NULL,
            citations TEXT NOT NULL,
            evidence_ids TEXT NOT NULL,
            truncated INTEGER NOT NULL DEFAULT 0,
            provider TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            latency_ms INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            trace TEXT NOT NULL
        );
        CREATE INDEX turns_tenant_conversation ON turns (tenant_id, conversation_id, id);
        CREATE TABLE gap_events (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            question TEXT NOT NULL,
            language TEXT NOT NULL,
            channel TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            reason TEXT NOT NULL
        );
        CREATE TABLE handoffs (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',
            created_at TEXT NOT NULL,
            transcript TEXT NOT NULL
        );
        """,
    )


def _m004_gaps(db: sqlite_utils.Database) -> None:
    """The gap backlog (G1-G5): merged entries, masked variants with retention, history.

    ``gap_events`` (raw questions) is left empty by the backlog's on-open migration, which masks each
    old row into a variant and deletes it."""
    _run_script(
        db,
        """
        ALTER TABLE tenants ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 30;
        CREATE TABLE gaps (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            label TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',
            article_path TEXT,
            count INTEGER NOT NULL DEFAULT 0,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            languages TEXT NOT NULL DEFAULT '[]',
            channels TEXT NOT NULL DEFAULT '[]',
            closed_at TEXT,
            closed_by TEXT,
            draft_path TEXT,
            draft_title TEXT,
            draft_content TEXT
        );
        CREATE INDEX gaps_tenant_status ON gaps (tenant_id, status, last_seen);
        CREATE TABLE gap_variants (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            gap_id INTEGER NOT NULL REFERENCES gaps(id) ON DELETE CASCADE,
            at TEXT NOT NULL,
            language TEXT NOT NULL,
            channel TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            sample TEXT,
            words TEXT,
            vector BLOB NOT NULL
        );
        CREATE INDEX gap_variants_tenant_gap ON gap_variants (tenant_id, gap_id);
        CREATE INDEX gap_variants_tenant_at ON gap_variants (tenant_id, at);
        CREATE TABLE gap_history (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            gap_id INTEGER NOT NULL REFERENCES gaps(id) ON DELETE CASCADE,
            at TEXT NOT NULL,
            event TEXT NOT NULL,
            actor TEXT NOT NULL,
            article_path TEXT,
            sample TEXT,
            detail TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX gap_history_tenant_gap ON gap_history (tenant_id, gap_id, id);
        CREATE TABLE gap_state (
            tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
            version INTEGER NOT NULL DEFAULT 0
        )
        """,
    )


def _m006_tenant_settings(db: sqlite_utils.Database) -> None:
    """Tenant settings (S2): one JSON row per tenant over the defaults; the name stays in ``tenants.name``
    and retention in ``tenants.retention_days``. API keys are never stored (they come from the environment)."""
    _run_script(
        db,
        """
        CREATE TABLE tenant_settings (
            tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
            settings TEXT NOT NULL DEFAULT '{}',
            updated_at TEXT NOT NULL,
            updated_by TEXT NOT NULL
        )
        """,
    )


_QA_SCHEMA = """
        CREATE TABLE qa_suites (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            UNIQUE (tenant_id, name)
        );
        CREATE TABLE qa_cases (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES qa_suites(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            question TEXT NOT NULL,
            prefix TEXT NOT NULL DEFAULT '[]',
            channel TEXT NOT NULL DEFAULT 'web',
            expect TEXT NOT NULL CHECK (expect IN ('answered', 'abstains', 'handoff', 'card')),
            cite TEXT NOT NULL DEFAULT '',
            card TEXT NOT NULL DEFAULT '',
            note TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            deleted_at TEXT
        );
        CREATE INDEX qa_cases_tenant_suite ON qa_cases (tenant_id, suite_id, position);
        CREATE TABLE qa_runs (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            suite_id INTEGER NOT NULL REFERENCES qa_suites(id) ON DELETE CASCADE,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            actor TEXT NOT NULL,
            provider TEXT NOT NULL DEFAULT '',
            total INTEGER NOT NULL,
            passed INTEGER NOT NULL
        );
        CREATE INDEX qa_runs_tenant_suite ON qa_runs (tenant_id, suite_id, id);
        CREATE TABLE qa_results (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES qa_runs(id) ON DELETE CASCADE,
            case_id INTEGER NOT NULL,
            position INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            status TEXT NOT NULL,
            passed INTEGER NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            answer TEXT NOT NULL DEFAULT '',
            citations TEXT NOT NULL DEFAULT '[]',
            steps TEXT NOT NULL DEFAULT '[]',
            latency_ms INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX qa_results_tenant_run ON qa_results (tenant_id, run_id, position)
        """


def _m005_qa(db: sqlite_utils.Database) -> None:
    """QA suites (Q2): cases with their expectation, runs, and one result per case and run. A result keeps a
    snapshot of its case (a deleted or edited case does not rewrite history) and the chunk ids it cited. A
    deleted case keeps its row (``deleted_at``) so its id is never reused: a diff matches cases across runs by id."""
    _run_script(db, _QA_SCHEMA)


def _m007_public(db: sqlite_utils.Database) -> None:
    """The public endpoint (P1-P4, H1): one site key per tenant (the public key the widget sends and the
    secret that signs identified customers' tokens), the private question log written when a chat opens,
    and the handoff inbox: staff replies, closing, the gap a ``not_covered*`` handoff came from, and the
    delivery state of the tenant's webhook."""
    _run_script(
        db,
        """
        CREATE TABLE site_keys (
            tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
            public_key TEXT NOT NULL UNIQUE,
            secret TEXT NOT NULL,
            key_rotated_at TEXT NOT NULL,
            secret_rotated_at TEXT NOT NULL,
            rotated_by TEXT NOT NULL
        );
        CREATE TABLE question_log (
            tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            channel TEXT NOT NULL,
            customer_id TEXT,
            language TEXT NOT NULL,
            question TEXT NOT NULL
        );
        CREATE INDEX question_log_tenant ON question_log (tenant_id, id);
        ALTER TABLE handoffs ADD COLUMN gap_id INTEGER;
        ALTER TABLE handoffs ADD COLUMN replies TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE handoffs ADD COLUMN closed_at TEXT;
        ALTER TABLE handoffs ADD COLUMN closed_by TEXT;
        ALTER TABLE handoffs ADD COLUMN webhook_status TEXT NOT NULL DEFAULT 'none';
        ALTER TABLE handoffs ADD COLUMN webhook_attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE handoffs ADD COLUMN webhook_error TEXT;
        ALTER TABLE handoffs ADD COLUMN webhook_at TEXT;
        CREATE INDEX handoffs_tenant_status ON handoffs (tenant_id, status, id);
        """,
    )


def _m008_variants(db: sqlite_utils.Database) -> None:
    """Question variants (core/variants.py): one fitted model per tenant over its Q&A answer groups."""
    _run_script(
        db,
        """
        CREATE TABLE variant_models (
            tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
            fingerprint TEXT NOT NULL,
            built_at TEXT NOT NULL,
            scale REAL NOT NULL,
            dim INTEGER NOT NULL,
            groups TEXT NOT NULL,
            weights BLOB NOT NULL,
            bias BLOB NOT NULL
        );
        """,
    )


def _m009_sentence_vectors(db: sqlite_utils.Database) -> None:
    """Each chunk's sentence vectors (float16, one row per sentence) for sentence-level ranking; NULL means
    not computed yet (chunks trained before this migration: the next training fills them in)."""
    _run_script(db, "ALTER TABLE chunks ADD COLUMN sentence_vectors BLOB;")


def _m010_variant_centroids(db: sqlite_utils.Database) -> None:
    """Variant models keep each group's centroid and how close a phrasing typically is to it
    (core/variants.py). Models fitted before have neither, so they are dropped: the next training refits
    them (until then the tenant uses the similarity rules)."""
    _run_script(db, """
        DELETE FROM variant_models;
        ALTER TABLE variant_models ADD COLUMN centroids BLOB NOT NULL DEFAULT x'';
        ALTER TABLE variant_models ADD COLUMN typical REAL NOT NULL DEFAULT 1.0;
        ALTER TABLE variant_models ADD COLUMN spread REAL NOT NULL DEFAULT 0.01;
        """)


#: Append-only: never edit or reorder a released migration, add a new one.
MIGRATIONS: list[tuple[str, Callable[[sqlite_utils.Database], None]]] = [
    ("001_tenancy", _m001_tenancy),
    ("002_knowledge", _m002_knowledge),
    ("003_conversations", _m003_conversations),
    ("004_gaps", _m004_gaps),
    ("005_qa", _m005_qa),
    ("006_tenant_settings", _m006_tenant_settings),
    ("007_public", _m007_public),
    ("008_variants", _m008_variants),
    ("009_sentence_vectors", _m009_sentence_vectors),
    ("010_variant_centroids", _m010_variant_centroids),
    ("011_qa_partial", rebuilds.m011_qa_partial),
    *later_migrations.MIGRATIONS,
]
