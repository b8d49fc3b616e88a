from __future__ import annotations

import pytest

from graphs.checkpointer import open_checkpointer


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "tern.db"


@pytest.fixture
def saver(db_path):
    s = open_checkpointer(db_path)
    yield s
    s.close()


def cfg(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict:
    c = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    if checkpoint_id is not None:
        c["configurable"]["checkpoint_id"] = checkpoint_id
    return c
