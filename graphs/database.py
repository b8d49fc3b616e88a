"""Open tern's database: the checkpointer and tern's own tables on one connection."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from graphs.checkpointer import HybridSqliteSaver, open_checkpointer
from graphs.storage import Store, StorageError, migrate


@dataclass
class Database:
    path: Path
    saver: HybridSqliteSaver
    store: Store

    def close(self) -> None:
        self.saver.close()


def open_database(path: str | Path) -> Database:
    """Open (creating if needed) the database file, or explain why it cannot be used."""
    path = Path(path).expanduser()
    try:
        saver = open_checkpointer(path)
        with saver.lock:
            migrate(saver.conn)
    except sqlite3.DatabaseError as exc:
        raise StorageError(
            f"cannot use the database {path}: {exc}. If the file is damaged, move it aside "
            f"(e.g. `mv '{path}' '{path}.broken'`) and tern will start a fresh one; "
            "nothing else is changed."
        ) from exc
    except OSError as exc:
        raise StorageError(
            f"cannot open the database {path}: {exc.strerror or exc}. Check the folder exists "
            "and is writable, or set [storage] database in config.toml."
        ) from exc
    return Database(path=path, saver=saver, store=Store(saver.conn, saver.lock))
