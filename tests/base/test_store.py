from core.base.migrations import MIGRATIONS
from core.base.store import Store


def test_migrations_are_recorded_once_and_wal_is_on(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    names = [r["name"] for r in store.query("SELECT name FROM _migrations ORDER BY name")]
    assert names == [name for name, _ in MIGRATIONS]
    assert store.migrate() == []
    assert store.query("PRAGMA journal_mode")[0]["journal_mode"] == "wal"
    store.close()
    reopened = Store(tmp_path / "db.sqlite")
    assert reopened.migrate() == []


def test_write_rolls_back_on_error(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    try:
        with store.write() as db:
            db.execute("INSERT INTO tenants (slug, name, created_at) VALUES ('x1', 'x', 'now')")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert store.query("SELECT COUNT(*) AS n FROM tenants")[0]["n"] == 0


def test_every_tenant_table_has_tenant_id(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    global_tables = {"tenants", "users", "_migrations", "admin_sessions"}  # a user's sign-in spans their tenants
    tables = [r["name"] for r in store.query("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        if table in global_tables:
            continue
        columns = [c["name"] for c in store.query(f"PRAGMA table_info({table})")]
        assert "tenant_id" in columns, table


def test_each_thread_writes_in_its_own_transaction(tmp_path):
    import threading
    import time

    store = Store(tmp_path / "threads.db")
    store.db.execute("CREATE TABLE t (x INTEGER)")
    inside = threading.Event()

    def failing_writer():
        try:
            with store.write() as db:
                db.execute("INSERT INTO t VALUES (1)")
                inside.set()
                time.sleep(0.3)
                raise RuntimeError("roll back")
        except RuntimeError:
            pass

    def other_writer():
        inside.wait()
        with store.write() as db:  # waits for the first writer's lock, then commits on its own
            db.execute("INSERT INTO t VALUES (2)")

    threads = [threading.Thread(target=failing_writer), threading.Thread(target=other_writer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [row["x"] for row in store.query("SELECT x FROM t")] == [2]
    store.close()
