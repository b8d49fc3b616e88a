"""What the first paint needs, read with plain sqlite3 before LangGraph loads.

Importing ``langgraph.graph`` costs ~0.7 s and ``langchain_openai`` ~1.1 s
here, so the thread list and the theme come straight from tern's own tables
(read-only, no migration); the conversation service loads right after the
first frame.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from graphs.storage import Store, ThreadRow


@dataclass
class FirstPaint:
    threads: list[ThreadRow] = field(default_factory=list)
    theme: str | None = None
    problem: str | None = None  # the database could not be read


def read_first_paint(database: Path, limit: int = 60) -> FirstPaint:
    if not database.exists():
        return FirstPaint()
    try:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return FirstPaint(problem=str(exc))
    try:
        store = Store(conn)
        try:
            threads = store.list_threads(limit=limit)
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # a database from before tern's tables
                return FirstPaint()
            raise
        try:
            theme = store.get_pref("theme")
        except sqlite3.OperationalError:
            theme = None
        return FirstPaint(threads, theme)
    except sqlite3.DatabaseError as exc:
        return FirstPaint(problem=str(exc))
    finally:
        conn.close()
