"""HybridSqliteSaver on real SQLite files: bridge, lock, writes, ancestor walk."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import sqlite3
import threading
import time

import pytest
from langgraph.checkpoint.base import WRITES_IDX_MAP, BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.sqlite import SqliteSaver

import graphs.checkpointer as checkpointer_module
from graphs.checkpointer import (
    _ANCESTORS_SQL,
    HybridSqliteSaver,
    SaverClosedError,
    open_checkpointer,
)

from .conftest import cfg


@dataclasses.dataclass
class Payload:
    command: str


def put_chain(saver, thread_id, ids, *, ns="", metadata=None):
    """Put checkpoints with the given ids, each the parent of the next."""
    parent = None
    for cid in ids:
        checkpoint = empty_checkpoint()
        checkpoint["id"] = cid
        checkpoint["channel_values"] = {"n": cid}
        saver.put(cfg(thread_id, parent, ns), checkpoint, dict(metadata or {}, step=0), {})
        parent = cid
    return parent


def ids_of(tuples):
    return [t.config["configurable"]["checkpoint_id"] for t in tuples]


# --------------------------------------------------------------------- bridge


def _base_async_methods():
    return sorted(
        name
        for name, fn in inspect.getmembers(BaseCheckpointSaver)
        if name.startswith("a") and (inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn))
    )


def test_every_async_method_of_the_base_class_is_bridged():
    names = _base_async_methods()
    # aget is a base-class convenience over aget_tuple; everything else must be ours.
    assert {"aget_tuple", "alist", "aput", "aput_writes", "adelete_thread",
            "aget_delta_channel_history", "acopy_thread", "aprune", "adelete_for_runs"} <= set(names)
    for name in names:
        if name == "aget":
            continue
        ours = getattr(HybridSqliteSaver, name)
        assert ours is not getattr(BaseCheckpointSaver, name), f"{name} is not bridged"
        assert ours is not getattr(SqliteSaver, name, None), f"{name} still raises upstream"
        assert name[1:] in dir(HybridSqliteSaver), f"{name} has no sync twin"


async def test_each_async_method_is_one_worker_hop(saver, monkeypatch):
    hops = []
    real = asyncio.to_thread

    async def counting(fn, *a, **k):
        hops.append(threading.get_ident())
        return await real(fn, *a, **k)

    monkeypatch.setattr(checkpointer_module.asyncio, "to_thread", counting)
    head = put_chain(saver, "t", [str(uuid6()) for _ in range(12)])
    saver.put_writes(cfg("t", head), [("n", "w")], "task")
    calls = {
        "aget_tuple": lambda: saver.aget_tuple(cfg("t", head)),
        "aget": lambda: saver.aget(cfg("t", head)),
        "aput": lambda: saver.aput(cfg("t", head), {**empty_checkpoint(), "id": str(uuid6())}, {}, {}),
        "aput_writes": lambda: saver.aput_writes(cfg("t", head), [("x", 1)], "task2"),
        "aget_delta_channel_history": lambda: saver.aget_delta_channel_history(
            config=cfg("t", head), channels=["n"]),
        "acopy_thread": lambda: saver.acopy_thread("t", "t2"),
        "aprune": lambda: saver.aprune(["t2"]),
        "adelete_for_runs": lambda: saver.adelete_for_runs(["nope"]),
        "adelete_thread": lambda: saver.adelete_thread("t2"),
    }
    for name, call in calls.items():
        hops.clear()
        await call()
        assert len(hops) == 1, f"{name} took {len(hops)} hops"
    hops.clear()
    assert len([t async for t in saver.alist(cfg("t"))]) == 13
    assert len(hops) == 1
    hops.clear()
    assert len([t async for t in saver.aancestors(cfg("t", head), page_size=100)]) == 12
    assert len(hops) == 1


def test_upstream_lock_still_guards_the_cursor(saver):
    """Invariant 1: the bridge adds no lock because SqliteSaver's cursor() takes one."""
    assert isinstance(saver.lock, type(threading.Lock()))
    entered = threading.Event()
    saver.lock.acquire()
    try:
        worker = threading.Thread(target=lambda: (saver.get_tuple(cfg("x")), entered.set()))
        worker.start()
        assert not entered.wait(0.3), "get_tuple ran while the saver lock was held"
    finally:
        saver.lock.release()
    worker.join(5)
    assert entered.is_set()


def test_conn_is_shared_across_threads(saver):
    assert saver.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert saver.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


def test_database_file_is_private(db_path, saver):
    assert os.stat(db_path).st_mode & 0o777 == 0o600


# --------------------------------------------------------------------- writes


@pytest.mark.parametrize("special", sorted(WRITES_IDX_MAP))
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_mixed_batch_replaces_special_and_keeps_ordinary(saver, special, mode):
    head = put_chain(saver, "t", [str(uuid6())])
    config = cfg("t", head)

    async def put(writes):
        if mode == "sync":
            saver.put_writes(config, writes, "task")
        else:
            await saver.aput_writes(config, writes, "task")

    await put([(special, "old"), ("ordinary", "old")])
    await put([(special, "new"), ("ordinary", "new")])
    pending = {ch: v for _, ch, v in saver.get_tuple(config).pending_writes}
    assert pending == {special: "new", "ordinary": "old"}


def test_failed_batch_writes_nothing(saver):
    head = put_chain(saver, "t", [str(uuid6())])
    config = cfg("t", head)
    saver.put_writes(config, [("a", 1)], "task")
    # Let the batch's first statement (the special channel) run, then fail the
    # second: upstream's cursor() would commit the first half.
    prepared = []

    def authorizer(action, arg1, *_):
        if action == sqlite3.SQLITE_INSERT and arg1 == "writes":
            prepared.append(arg1)
            return sqlite3.SQLITE_DENY if len(prepared) > 1 else sqlite3.SQLITE_OK
        return sqlite3.SQLITE_OK

    saver.conn.set_authorizer(authorizer)
    try:
        with pytest.raises(sqlite3.DatabaseError):
            saver.put_writes(config, [("__error__", "boom"), ("b", 2)], "task2")
    finally:
        saver.conn.set_authorizer(None)
    assert [ch for _, ch, _ in saver.get_tuple(config).pending_writes] == ["a"]
    # and the connection is still usable afterwards
    saver.put_writes(config, [("c", 3)], "task3")
    assert len(saver.get_tuple(config).pending_writes) == 2


# -------------------------------------------------------------- ancestor walk


def test_ancestors_follow_parents_when_ids_are_out_of_order(saver):
    ids = [str(uuid6()) for _ in range(5)]
    ids.reverse()  # each parent's id sorts above its child's
    head = put_chain(saver, "t", ids)
    assert ids_of(saver.ancestors(cfg("t", head))) == list(reversed(ids))
    # id-ordered list() gets this wrong: it puts the child first.
    assert ids_of(saver.list(cfg("t"))) != list(reversed(ids))


def test_ancestors_never_yield_a_sibling_branch(saver):
    a, b, c1, c2, d2 = (str(uuid6()) for _ in range(5))
    put_chain(saver, "t", [a, b, c1])
    put_chain(saver, "t", [c2, d2]) if False else None
    for parent, cid in ((b, c2), (c2, d2)):
        cp = empty_checkpoint()
        cp["id"] = cid
        saver.put(cfg("t", parent), cp, {"step": 0}, {})
    assert ids_of(saver.ancestors(cfg("t", c1))) == [c1, b, a]
    assert ids_of(saver.ancestors(cfg("t", d2))) == [d2, c2, b, a]
    assert set(ids_of(saver.list(cfg("t")))) == {a, b, c1, c2, d2}


def test_ancestors_stop_on_a_cycle(saver):
    a, b, c = (str(uuid6()) for _ in range(3))
    put_chain(saver, "t", [a, b, c])
    # Re-put a with c as its parent: a -> c -> b -> a is now a loop.
    cp = empty_checkpoint()
    cp["id"] = a
    saver.put(cfg("t", c), cp, {"step": 0}, {})
    assert ids_of(saver.ancestors(cfg("t", c))) == [c, b, a]
    assert ids_of(saver.ancestors(cfg("t", c), page_size=2)) == [c, b, a]


async def test_aancestors_matches_sync_and_limit(saver):
    ids = [str(uuid6()) for _ in range(120)]
    head = put_chain(saver, "t", ids)
    expected = list(reversed(ids))
    assert ids_of([t async for t in saver.aancestors(cfg("t", head))]) == expected
    assert ids_of(saver.ancestors(cfg("t", head), limit=7)) == expected[:7]
    assert ids_of([t async for t in saver.aancestors(cfg("t", head), limit=60)]) == expected[:60]


def test_ancestors_without_id_start_at_the_stored_head(saver):
    from graphs.storage import Store, migrate

    migrate(saver.conn)
    store = Store(saver.conn, saver.lock)
    store.create_thread("t", "chat")
    a, b, c = (str(uuid6()) for _ in range(3))
    put_chain(saver, "t", [a, b])
    cp = empty_checkpoint()
    cp["id"] = c
    saver.put(cfg("t", a), cp, {"step": 0}, {})  # c is the newest id, a sibling of b
    assert ids_of(saver.ancestors(cfg("t"))) == [c, a]  # no stored head: newest
    store.set_head("t", b)
    assert ids_of(saver.ancestors(cfg("t"))) == [b, a]


def test_ancestor_pages_load_writes_in_batches(saver):
    ids = [str(uuid6()) for _ in range(120)]
    head = put_chain(saver, "t", ids)
    for cid in ids:
        saver.put_writes(cfg("t", cid), [("n", cid)], "task")
    statements = []
    saver.conn.set_trace_callback(statements.append)
    try:
        walked = list(saver.ancestors(cfg("t", head)))
    finally:
        saver.conn.set_trace_callback(None)
    assert [t.pending_writes[0][2] for t in walked] == list(reversed(ids))
    writes_queries = [s for s in statements if "FROM writes" in s]
    assert len(writes_queries) == 2  # a page of 50, then a larger one: not 120 queries


def test_first_page_does_not_read_the_rest_of_a_long_chain(saver, monkeypatch):
    """The first 50 of a 10,000 chain deserialises 50 and walks ~50 rows."""
    for n, thread in ((1_000, "short"), (10_000, "long")):
        put_chain(saver, thread, [str(uuid6()) for _ in range(n)])

    def cost(thread):
        steps = [0]

        def tick():
            steps[0] += 1
            return 0

        head = saver.head_checkpoint_id(thread)
        saver.conn.set_progress_handler(tick, 100)
        try:
            page = list(saver.ancestors(cfg(thread, head), limit=50))
        finally:
            saver.conn.set_progress_handler(None, 0)
        assert len(page) == 50
        return steps[0]

    short, long = cost("short"), cost("long")
    assert long <= short * 1.5 + 5, (short, long)


def test_walk_uses_primary_key_lookups(saver):
    plan = saver.conn.execute("EXPLAIN QUERY PLAN " + _ANCESTORS_SQL, ("t", "", "x", 50)).fetchall()
    details = [row[3] for row in plan]
    recursive_steps = [d for d in details if " c " in f" {d} " or d.startswith(("SEARCH c", "SCAN c"))]
    assert any(d.startswith("SEARCH c USING INDEX sqlite_autoindex_checkpoints_1") for d in details), details
    assert not any(d.startswith("SCAN c") for d in details), details
    assert recursive_steps


# ----------------------------------------------------------- thread operations


def test_copy_lineage_copies_one_branch_only(saver):
    a, b, c1, c2 = (str(uuid6()) for _ in range(4))
    put_chain(saver, "t", [a, b, c1])
    cp = empty_checkpoint()
    cp["id"] = c2
    saver.put(cfg("t", b), cp, {"step": 0}, {})
    saver.put_writes(cfg("t", b), [("n", "write-on-b")], "task")
    assert saver.copy_lineage(cfg("t", c2), "copy") == c2
    assert ids_of(saver.ancestors(cfg("copy", c2))) == [c2, b, a]
    assert set(ids_of(saver.list(cfg("copy")))) == {a, b, c2}
    assert saver.get_tuple(cfg("copy", b)).pending_writes[0][2] == "write-on-b"


def test_copy_lineage_of_a_cycle_ends_at_a_root(saver):
    a, b = str(uuid6()), str(uuid6())
    put_chain(saver, "t", [a, b])
    cp = empty_checkpoint()
    cp["id"] = a
    saver.put(cfg("t", b), cp, {"step": 0}, {})
    saver.copy_lineage(cfg("t", b), "copy")
    assert ids_of(saver.ancestors(cfg("copy", b))) == [b, a]
    assert saver.get_tuple(cfg("copy", a)).parent_config is None


def test_strict_deserialisation_does_not_revive_other_types(saver):
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    head = str(uuid6())
    cp = empty_checkpoint()
    cp["id"] = head
    cp["channel_values"] = {"x": Payload(command="rm -rf ~")}
    # Write it with a permissive serializer, as a tampered file would hold it.
    permissive = SqliteSaver(saver.conn, serde=JsonPlusSerializer(allowed_msgpack_modules=True))
    permissive.lock = saver.lock
    permissive.put(cfg("t"), cp, {}, {})
    value = saver.get_tuple(cfg("t", head)).checkpoint["channel_values"]["x"]
    assert not isinstance(value, Payload)
    assert value == {"command": "rm -rf ~"}  # inert data, not a revived object
    from langchain_core.messages import HumanMessage

    cp2 = empty_checkpoint()
    cp2["id"] = str(uuid6())
    cp2["channel_values"] = {"m": [HumanMessage("hi")]}
    saver.put(cfg("t"), cp2, {}, {})
    assert saver.get_tuple(cfg("t", cp2["id"])).checkpoint["channel_values"]["m"] == [HumanMessage("hi")]


# ------------------------------------------------------------- concurrency


async def test_concurrent_async_and_sync_callers(saver):
    errors = []

    def sync_caller(k):
        try:
            for i in range(20):
                head = put_chain(saver, f"sync-{k}", [str(uuid6())])
                saver.put_writes(cfg(f"sync-{k}", head), [("v", i)], "task")
                assert saver.get_tuple(cfg(f"sync-{k}", head)) is not None
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    async def async_call(thread, i):
        cp = empty_checkpoint()
        cp["id"] = str(uuid6())
        cp["channel_values"] = {"i": i}
        stored = await saver.aput(cfg(thread), cp, {"step": i}, {})
        await saver.aput_writes(stored, [("w", i)], f"task{i}")
        return stored

    threads = [threading.Thread(target=sync_caller, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    stored = await asyncio.gather(*(async_call(f"thread-{i % 20}", i) for i in range(200)))
    for t in threads:
        t.join()
    assert not errors
    for i, config in enumerate(stored):
        tup = await saver.aget_tuple(config)
        assert tup.checkpoint["channel_values"] == {"i": i}
        assert [v for _, _, v in tup.pending_writes] == [i]
    for k in range(3):
        assert len(list(saver.list(cfg(f"sync-{k}")))) == 20


async def test_no_statement_runs_on_the_loop_and_the_loop_keeps_ticking(saver):
    loop_thread = threading.get_ident()
    on_loop = []

    def trace(statement):
        if threading.get_ident() == loop_thread:
            on_loop.append(statement)
        if "INSERT OR REPLACE INTO checkpoints" in statement:
            time.sleep(0.3)  # a slow write, as on a busy disk

    saver.conn.set_trace_callback(trace)
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        cp = empty_checkpoint()
        stored = await saver.aput(cfg("t"), cp, {}, {})
        await saver.aget_tuple(stored)
        _ = [t async for t in saver.alist(cfg("t"))]
        _ = [t async for t in saver.aancestors(stored)]
    finally:
        task.cancel()
        saver.conn.set_trace_callback(None)
    assert on_loop == []
    assert ticks >= 10


async def test_close_waits_for_in_flight_calls(db_path):
    saver = open_checkpointer(db_path)
    started = threading.Event()

    def slow(statement):
        if "INSERT OR REPLACE INTO checkpoints" in statement:
            started.set()
            time.sleep(0.3)

    saver.conn.set_trace_callback(slow)
    put = asyncio.create_task(saver.aput(cfg("t"), empty_checkpoint(), {}, {}))
    await asyncio.to_thread(started.wait, 5)
    await asyncio.to_thread(saver.close)
    assert (await put)["configurable"]["thread_id"] == "t"
    with pytest.raises(SaverClosedError):
        await saver.aget_tuple(cfg("t"))


def test_two_connections_wait_instead_of_failing(db_path):
    first = open_checkpointer(db_path)
    second = open_checkpointer(db_path)
    try:
        first.conn.execute("BEGIN IMMEDIATE")
        done = threading.Event()
        worker = threading.Thread(target=lambda: (put_chain(second, "t", [str(uuid6())]), done.set()))
        worker.start()
        time.sleep(0.3)
        assert not done.is_set()
        first.conn.commit()
        worker.join(10)
        assert done.is_set()
    finally:
        first.close()
        second.close()
