"""tern's own tables, beside LangGraph's, in the same SQLite file.

LangGraph has no place for a thread's title, kind, visible head or attached
source, and listing threads from the checkpoints table would scan every
checkpoint. So tern keeps a small index (``threads``), a full-text index of
message text for search (``thread_text``), and content-addressed
``sources``. Schema changes are numbered migrations tracked in
``PRAGMA user_version``.

Everything here uses the saver's connection under the saver's lock
(DESIGN invariant 1: one connection, one file, one lock).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ThreadKind = Literal["chat", "source"]

MIGRATIONS: list[str] = [
    # 1: thread index, sources, message-text search
    """
    CREATE TABLE IF NOT EXISTS sources (
        id TEXT PRIMARY KEY,              -- sha256 of the text
        title TEXT NOT NULL,
        origin TEXT NOT NULL,             -- the path or URL it came from
        media_type TEXT NOT NULL,
        text TEXT NOT NULL,
        chars INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE TABLE IF NOT EXISTS threads (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('chat', 'source')),
        title TEXT NOT NULL DEFAULT '',
        head_checkpoint_id TEXT,
        source_id TEXT REFERENCES sources(id),
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS threads_by_recency ON threads(updated_at DESC);
    CREATE VIRTUAL TABLE IF NOT EXISTS thread_text USING fts5(
        thread_id UNINDEXED, text, tokenize = 'trigram'
    );
    """,
    # 2: find a checkpoint's children without scanning the thread (history
    # panel sibling counts, switching branches). On LangGraph's table, which
    # open_checkpointer has created by the time migrations run.
    """
    CREATE INDEX IF NOT EXISTS tern_checkpoints_by_parent
        ON checkpoints(thread_id, checkpoint_ns, parent_checkpoint_id);
    CREATE TABLE IF NOT EXISTS prefs (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # 3: what stopped the last answer, in words a person can act on (LangGraph
    # keeps only the exception's repr in its __error__ write).
    """
    ALTER TABLE threads ADD COLUMN last_error TEXT;
    """,
]


class StorageError(Exception):
    """The database cannot be used; the message says what to do."""


@dataclass(frozen=True)
class ThreadRow:
    id: str
    kind: ThreadKind
    title: str
    head_checkpoint_id: str | None
    source_id: str | None
    created_at: float
    updated_at: float
    source_title: str | None = None
    source_chars: int | None = None
    last_error: str | None = None


@dataclass(frozen=True)
class SourceRow:
    id: str
    title: str
    origin: str
    media_type: str
    text: str
    chars: int
    created_at: float


_THREAD_COLUMNS = (
    "t.id, t.kind, t.title, t.head_checkpoint_id, t.source_id, t.created_at, t.updated_at, "
    "s.title, s.chars, t.last_error"
)
_THREAD_FROM = "threads t LEFT JOIN sources s ON s.id = t.source_id"


def migrate(conn: sqlite3.Connection) -> None:
    """Bring tern's tables to the newest schema, one numbered step at a time."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > len(MIGRATIONS):
        raise StorageError(
            f"this database was written by a newer tern (schema {version}, this tern knows "
            f"{len(MIGRATIONS)}); upgrade tern or point [storage] database at another file"
        )
    for number in range(version + 1, len(MIGRATIONS) + 1):
        conn.executescript(
            "BEGIN IMMEDIATE;\n" + MIGRATIONS[number - 1] + f"\nPRAGMA user_version = {number};\nCOMMIT;"
        )


class Store:
    """Thread index and sources on a connection guarded by ``lock``.

    In the app ``conn`` and ``lock`` are the checkpointer's own, so these
    queries queue behind checkpoint I/O on one lock; the first paint uses a
    connection of its own before LangGraph is even imported.
    """

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock | None = None) -> None:
        self.conn = conn
        self.lock = lock if lock is not None else threading.Lock()

    @contextmanager
    def _cur(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with self.lock:
            cur = self.conn.cursor()
            try:
                yield cur
                if transaction:
                    self.conn.commit()
            except BaseException:
                if transaction and self.conn.in_transaction:
                    self.conn.rollback()
                raise
            finally:
                cur.close()

    # ---------------------------------------------------------------- threads

    def create_thread(
        self,
        thread_id: str,
        kind: ThreadKind,
        *,
        title: str = "",
        source_id: str | None = None,
        now: float | None = None,
    ) -> ThreadRow:
        now = time.time() if now is None else now
        with self._cur() as cur:
            cur.execute(
                "INSERT INTO threads (id, kind, title, source_id, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (thread_id, kind, title, source_id, now, now),
            )
        row = self.get_thread(thread_id)
        assert row is not None
        return row

    def get_thread(self, thread_id: str) -> ThreadRow | None:
        with self._cur(transaction=False) as cur:
            row = cur.execute(
                f"SELECT {_THREAD_COLUMNS} FROM {_THREAD_FROM} WHERE t.id = ?", (thread_id,)
            ).fetchone()
        return ThreadRow(*row) if row else None

    def list_threads(self, *, limit: int = 200, offset: int = 0) -> list[ThreadRow]:
        """Threads by recency: reads only the index, never checkpoints."""
        with self._cur(transaction=False) as cur:
            rows = cur.execute(
                f"SELECT {_THREAD_COLUMNS} FROM {_THREAD_FROM} "
                "ORDER BY t.updated_at DESC LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
        return [ThreadRow(*r) for r in rows]

    def most_recent_thread(self) -> ThreadRow | None:
        rows = self.list_threads(limit=1)
        return rows[0] if rows else None

    def set_head(self, thread_id: str, checkpoint_id: str, *, now: float | None = None) -> None:
        with self._cur() as cur:
            cur.execute(
                "UPDATE threads SET head_checkpoint_id = ?, updated_at = ? WHERE id = ?",
                (checkpoint_id, time.time() if now is None else now, thread_id),
            )

    def set_error(self, thread_id: str, problem: str | None) -> None:
        with self._cur() as cur:
            cur.execute("UPDATE threads SET last_error = ? WHERE id = ?", (problem, thread_id))

    def rename_thread(self, thread_id: str, title: str) -> None:
        with self._cur() as cur:
            cur.execute("UPDATE threads SET title = ? WHERE id = ?", (title, thread_id))

    def delete_thread(self, thread_id: str) -> None:
        with self._cur() as cur:
            cur.execute("DELETE FROM threads WHERE id = ?", (thread_id,))
            cur.execute("DELETE FROM thread_text WHERE thread_id = ?", (thread_id,))

    def index_text(self, thread_id: str, text: str) -> None:
        """Remember message text so search finds the thread by what was said."""
        self.index_texts(thread_id, [text])

    def index_texts(self, thread_id: str, texts: list[str]) -> None:
        rows = [(thread_id, text) for text in texts if text.strip()]
        if rows:
            with self._cur() as cur:
                cur.executemany("INSERT INTO thread_text (thread_id, text) VALUES (?, ?)", rows)

    def search_threads(self, query: str, *, limit: int = 200) -> list[ThreadRow]:
        """Threads whose title or any message contains ``query`` (case-insensitive)."""
        query = query.strip()
        if not query:
            return self.list_threads(limit=limit)
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with self._cur(transaction=False) as cur:
            # The trigram index serves LIKE for patterns of 3+ characters;
            # shorter ones scan, which is fine for a handful of letters.
            rows = cur.execute(
                f"SELECT {_THREAD_COLUMNS} FROM {_THREAD_FROM} "
                "WHERE t.title LIKE ?1 ESCAPE '\\' OR t.id IN "
                "(SELECT thread_id FROM thread_text WHERE text LIKE ?1 ESCAPE '\\') "
                "ORDER BY t.updated_at DESC LIMIT ?2",
                (pattern, limit),
            ).fetchall()
        return [ThreadRow(*r) for r in rows]

    # ---------------------------------------------------------------- prefs

    def get_pref(self, key: str) -> str | None:
        with self._cur(transaction=False) as cur:
            row = cur.execute("SELECT value FROM prefs WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_pref(self, key: str, value: str) -> None:
        with self._cur() as cur:
            cur.execute("INSERT OR REPLACE INTO prefs (key, value) VALUES (?, ?)", (key, value))

    # ---------------------------------------------------------------- sources

    def put_source(
        self, *, title: str, origin: str, media_type: str, text: str, now: float | None = None
    ) -> SourceRow:
        """Store a source by the hash of its text; the same text is stored once."""
        import hashlib  # here, not at the top: the app's first paint imports this module

        source_id = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with self._cur() as cur:
            cur.execute(
                "INSERT OR IGNORE INTO sources (id, title, origin, media_type, text, chars, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (source_id, title, origin, media_type, text, len(text),
                 time.time() if now is None else now),
            )
        row = self.get_source(source_id)
        assert row is not None
        return row

    def get_source(self, source_id: str) -> SourceRow | None:
        with self._cur(transaction=False) as cur:
            row = cur.execute(
                "SELECT id, title, origin, media_type, text, chars, created_at FROM sources "
                "WHERE id = ?",
                (source_id,),
            ).fetchone()
        return SourceRow(*row) if row else None


def check_integrity(path: str | Path) -> str:
    """``PRAGMA quick_check`` on a file: 'ok' or SQLite's description of the damage."""
    with sqlite3.connect(str(path)) as conn:
        return str(conn.execute("PRAGMA quick_check").fetchone()[0])
