"""tern's own tables: the thread index, sources, migrations."""

from __future__ import annotations

import sqlite3

import pytest

from graphs.database import open_database
from graphs.storage import MIGRATIONS, StorageError, migrate


def test_listing_by_recency_reads_only_the_index(tmp_path):
    db = open_database(tmp_path / "t.db")
    try:
        for i in range(500):
            db.store.create_thread(f"t{i}", "chat", title=f"thread {i}", now=float(i))
        rows = db.store.list_threads(limit=50)
        assert [r.id for r in rows[:3]] == ["t499", "t498", "t497"]
        statements = []
        db.saver.conn.set_trace_callback(statements.append)
        db.store.list_threads(limit=50)
        db.saver.conn.set_trace_callback(None)
        assert statements and not any("checkpoints" in s for s in statements)
        plan = " ".join(str(r) for r in db.saver.conn.execute(
            "EXPLAIN QUERY PLAN SELECT t.id FROM threads t LEFT JOIN sources s ON s.id = t.source_id "
            "ORDER BY t.updated_at DESC LIMIT 50"))
        assert "threads_by_recency" in plan
    finally:
        db.close()


def test_migrations_are_numbered_and_idempotent(tmp_path):
    db = open_database(tmp_path / "t.db")
    db.close()
    conn = sqlite3.connect(tmp_path / "t.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    migrate(conn)  # nothing left to do
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.commit()
    with pytest.raises(StorageError, match="newer tern"):
        migrate(conn)
    conn.close()


def test_sources_are_content_addressed(tmp_path):
    db = open_database(tmp_path / "t.db")
    try:
        a = db.store.put_source(title="a", origin="/x/a.txt", media_type="text/plain", text="same text")
        b = db.store.put_source(title="b", origin="/y/b.txt", media_type="text/plain", text="same text")
        assert a.id == b.id
        assert db.saver.conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 1
    finally:
        db.close()


def test_a_corrupt_file_is_explained_and_left_alone(tmp_path):
    path = tmp_path / "t.db"
    path.write_bytes(b"garbage" * 1000)
    with pytest.raises(StorageError, match="move it aside"):
        open_database(path)
    assert path.read_bytes() == b"garbage" * 1000


def test_store_rolls_back_a_failed_write(tmp_path):
    db = open_database(tmp_path / "t.db")
    try:
        db.store.create_thread("a", "chat")
        with pytest.raises(sqlite3.IntegrityError):
            db.store.create_thread("a", "chat")
        assert len(db.store.list_threads()) == 1
        assert not db.saver.conn.in_transaction
    finally:
        db.close()
