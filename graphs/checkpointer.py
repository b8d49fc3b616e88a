"""HybridSqliteSaver: LangGraph's sync SqliteSaver with its async surface bridged
to a worker thread, plus the ancestor walk, per-write conflict rules and the
thread operations upstream lacks.

Why a bridge and not AsyncSqliteSaver: tern needs sync access too (scripts,
the first paint before LangGraph is imported, tests) over *one* connection,
and SqliteSaver already serialises every use of that connection with its own
``threading.Lock``. Each async method is therefore one ``asyncio.to_thread``
hop into the sync twin; no lock is added here (DESIGN invariant 1).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    get_checkpoint_id,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.utils import load_pending_writes

#: The page the ancestor walk reads per lock acquisition. The first page of a
#: history panel is this size, so opening it costs one short query.
ANCESTOR_PAGE = 50

_MAX_PAGE = 2000

#: How long a second tern process waits for the write lock before SQLite
#: reports "database is locked". Turns write a few rows at a time, so waits
#: are short; a generous timeout turns contention into a pause, not an error.
BUSY_TIMEOUT_S = 30.0

# Types tern stores in checkpoints beyond LangGraph's built-in safe list
# (messages, datetimes, Overwrite, ...). Anything else in a tampered
# database comes back as inert data instead of being imported and called.
TERN_ALLOWED_TYPES: tuple[tuple[str, ...], ...] = ()

# One recursive step is one primary-key lookup: CROSS JOIN pins `walk` as the
# outer loop, so SQLite never scans the thread's checkpoints per step (it may
# choose to without ANALYZE statistics if given a plain JOIN). SQLite produces
# recursive rows lazily, so LIMIT stops the recursion itself, which is what
# makes the first page cost the same on a 100- or a 100,000-checkpoint chain.
_ANCESTORS_SQL = """
WITH RECURSIVE walk(checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) AS (
    SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
    FROM checkpoints
    WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata
    FROM walk w CROSS JOIN checkpoints c
    ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.checkpoint_id = w.parent_checkpoint_id
)
SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM walk LIMIT ?4
"""

# Same walk, ids only: used to copy a lineage and to find what prune keeps.
_ANCESTOR_IDS_SQL = """
WITH RECURSIVE walk(checkpoint_id, parent_checkpoint_id) AS (
    SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints
    WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id
    FROM walk w CROSS JOIN checkpoints c
    ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.checkpoint_id = w.parent_checkpoint_id
)
SELECT checkpoint_id, parent_checkpoint_id FROM walk LIMIT ?4
"""

_WRITE_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
)


class SaverClosedError(RuntimeError):
    """The checkpointer was closed; reopen the database to continue."""


def strict_serializer() -> JsonPlusSerializer:
    """A serializer that revives only LangGraph's safe types and tern's own."""
    return JsonPlusSerializer(
        pickle_fallback=False,
        allowed_json_modules=None,
        allowed_msgpack_modules=list(TERN_ALLOWED_TYPES) or None,
    )


class HybridSqliteSaver(SqliteSaver):
    """SqliteSaver whose async methods run the sync ones on a worker thread.

    Extends upstream with: ``ancestors``/``aancestors`` (the lineage of one
    checkpoint, never its siblings), per-write conflict rules in
    ``put_writes``, ``copy_thread``, ``copy_lineage``, ``delete_for_runs`` and
    a DeltaChannel-aware ``prune``, and a ``close`` that waits for in-flight
    worker calls.
    """

    def __init__(self, conn: sqlite3.Connection, *, serde: Any = None) -> None:
        super().__init__(conn, serde=serde if serde is not None else strict_serializer())
        self._in_flight = 0
        self._idle = threading.Condition()
        self._closed = False

    # ------------------------------------------------------------------ bridge

    async def _in_worker(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Run one sync call on a worker thread, counted so close() can wait.

        The count is taken on the loop thread before the hop and released in
        the worker, so a caller cancelled mid-call still holds close() back
        until the statement it started has finished.
        """
        with self._idle:
            if self._closed:
                raise SaverClosedError("the database was closed")
            self._in_flight += 1

        def run() -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                with self._idle:
                    self._in_flight -= 1
                    self._idle.notify_all()

        return await asyncio.to_thread(run)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._in_worker(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        # list() holds the saver lock while its generator is suspended, so it
        # must be drained inside the worker: iterating it lazily across
        # threads would leave the lock held between hops and deadlock.
        def drain() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for item in await self._in_worker(drain):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._in_worker(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._in_worker(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._in_worker(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._in_worker(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._in_worker(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        await self._in_worker(self.prune, thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        # The base class walks one aget_tuple per ancestor (and never ends on
        # a parent cycle); upstream's sync override is one CTE that stops on a
        # repeated id, so one hop to it is both faster and safe.
        return await self._in_worker(
            self.get_delta_channel_history, config=config, channels=channels
        )

    async def aancestors(
        self, config: RunnableConfig, *, limit: int | None = None, page_size: int = ANCESTOR_PAGE
    ) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`ancestors`: one worker hop per page."""
        walk = _AncestorWalk(self, config, limit=limit, page_size=page_size)
        while not walk.exhausted:
            page = await self._in_worker(walk.next_page)
            if not page:
                return
            for item in page:
                yield item

    async def acopy_lineage(self, config: RunnableConfig, target_thread_id: str) -> str | None:
        return await self._in_worker(self.copy_lineage, config, target_thread_id)

    # ------------------------------------------------------------- writes

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store writes with a conflict rule chosen per write, atomically.

        Special channels (``__error__``, ``__interrupt__``, ...) record the
        latest outcome of a task, so a retry replaces them; ordinary channel
        writes are idempotent, so a retry keeps the first. Upstream picks one
        rule for the whole batch, which keeps a stale ``__error__`` when the
        batch is mixed. Upstream's ``cursor()`` also commits in ``finally`` even
        when a statement raised, so this runs its own transaction and rolls a
        failed batch back.
        """
        if not writes:
            return
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = str(config["configurable"].get("checkpoint_ns", ""))
        checkpoint_id = str(config["configurable"]["checkpoint_id"])
        # Serialise before touching the database, so a value that cannot be
        # serialised fails the batch before any row is written.
        replace_rows: list[tuple[Any, ...]] = []
        ignore_rows: list[tuple[Any, ...]] = []
        for idx, (channel, value) in enumerate(writes):
            row = (
                thread_id,
                checkpoint_ns,
                checkpoint_id,
                task_id,
                task_path,
                WRITES_IDX_MAP.get(channel, idx),
                channel,
                *self.serde.dumps_typed(value),
            )
            (replace_rows if channel in WRITES_IDX_MAP else ignore_rows).append(row)
        placeholders = ", ".join("?" * 9)
        with self._transaction() as cur:
            if replace_rows:
                cur.executemany(
                    f"INSERT OR REPLACE INTO writes ({_WRITE_COLUMNS}) VALUES ({placeholders})",
                    replace_rows,
                )
            if ignore_rows:
                cur.executemany(
                    f"INSERT OR IGNORE INTO writes ({_WRITE_COLUMNS}) VALUES ({placeholders})",
                    ignore_rows,
                )

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    # ------------------------------------------------------------- lineage

    def ancestors(
        self, config: RunnableConfig, *, limit: int | None = None, page_size: int = ANCESTOR_PAGE
    ) -> Iterator[CheckpointTuple]:
        """Yield a checkpoint and its ancestors to the root, nearest first.

        Follows ``parent_checkpoint_id``, so it is right when ids are out of
        order (ids are monotonic only within one process) and never yields a
        sibling branch. Stops at a repeated id: ``put`` is INSERT OR REPLACE,
        so re-putting an existing id under a descendant makes a loop. Reads a
        page at a time and releases the lock between pages, so a caller that
        stops early has read only what it used. Without a checkpoint id the
        walk starts at the thread's head (tern's stored head, else the
        newest checkpoint).
        """
        walk = _AncestorWalk(self, config, limit=limit, page_size=page_size)
        while page := walk.next_page():
            yield from page

    def head_checkpoint_id(self, thread_id: str, checkpoint_ns: str = "") -> str | None:
        """The checkpoint a thread's conversation stands at.

        tern stores each thread's head in its own ``threads`` table, because
        "the largest id" is not the visible conversation after a fork. Threads
        tern does not index (a plain LangGraph user of this saver) fall back to
        the newest checkpoint.
        """
        with self.cursor(transaction=False) as cur:
            return self._head_checkpoint_id(cur, thread_id, checkpoint_ns)

    def _head_checkpoint_id(
        self, cur: sqlite3.Cursor, thread_id: str, checkpoint_ns: str
    ) -> str | None:
        if checkpoint_ns == "" and _has_table(cur, "threads"):
            row = cur.execute(
                "SELECT head_checkpoint_id FROM threads WHERE id = ?", (thread_id,)
            ).fetchone()
            if row and row[0]:
                return cast(str, row[0])
        row = cur.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread_id, checkpoint_ns),
        ).fetchone()
        return cast(str, row[0]) if row else None

    def children(self, thread_id: str, checkpoint_id: str, checkpoint_ns: str = "") -> list[str]:
        """Ids of the checkpoints whose parent is ``checkpoint_id`` (the branches there)."""
        with self.cursor(transaction=False) as cur:
            return [r[0] for r in cur.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND parent_checkpoint_id = ? ORDER BY checkpoint_id",
                (thread_id, checkpoint_ns, checkpoint_id),
            )]

    def children_counts(
        self, thread_id: str, checkpoint_ids: Sequence[str], checkpoint_ns: str = ""
    ) -> dict[str, int]:
        """How many children each of ``checkpoint_ids`` has, in one query."""
        if not checkpoint_ids:
            return {}
        marks = ", ".join("?" * len(checkpoint_ids))
        with self.cursor(transaction=False) as cur:
            return dict(cur.execute(
                "SELECT parent_checkpoint_id, COUNT(*) FROM checkpoints WHERE thread_id = ? "
                f"AND checkpoint_ns = ? AND parent_checkpoint_id IN ({marks}) "
                "GROUP BY parent_checkpoint_id",
                (thread_id, checkpoint_ns, *checkpoint_ids),
            ).fetchall())

    def branch_tip(self, thread_id: str, checkpoint_id: str, checkpoint_ns: str = "") -> str:
        """The newest leaf below ``checkpoint_id``: where that branch's conversation stands."""
        with self.cursor(transaction=False) as cur:
            row = cur.execute(
                # UNION (not UNION ALL) drops repeats, so a parent loop ends.
                "WITH RECURSIVE below(id) AS (SELECT ?3 UNION SELECT c.checkpoint_id "
                "FROM below b CROSS JOIN checkpoints c ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 "
                "AND c.parent_checkpoint_id = b.id) "
                "SELECT id FROM below b WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE "
                "c.thread_id = ?1 AND c.checkpoint_ns = ?2 AND c.parent_checkpoint_id = b.id) "
                "ORDER BY id DESC LIMIT 1",
                (thread_id, checkpoint_ns, checkpoint_id),
            ).fetchone()
        return cast(str, row[0]) if row else checkpoint_id

    # ------------------------------------------------------------- thread ops

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread, all namespaces.

        Copies whole parent chains, which is what DeltaChannel needs to
        rebuild its state in the target (see the base class note).
        """
        src, dst = str(source_thread_id), str(target_thread_id)
        with self._transaction() as cur:
            cur.execute(
                "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata) "
                "SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
                "metadata FROM checkpoints WHERE thread_id = ?",
                (dst, src),
            )
            cur.execute(
                f"INSERT OR REPLACE INTO writes ({_WRITE_COLUMNS}) "
                "SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
                "value FROM writes WHERE thread_id = ?",
                (dst, src),
            )

    def copy_lineage(self, config: RunnableConfig, target_thread_id: str) -> str | None:
        """Copy one checkpoint and its ancestors (root namespace) to a new thread.

        Only that lineage is copied, never sibling branches, with the writes of
        every copied checkpoint so DeltaChannel state rebuilds identically.
        Returns the copied head's id (the target's head), or None if the
        checkpoint does not exist.
        """
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        dst = str(target_thread_id)
        with self._transaction() as cur:
            head = get_checkpoint_id(config) or self._head_checkpoint_id(cur, thread_id, ns)
            if head is None:
                return None
            ids = _lineage_ids(cur, thread_id, ns, head)
            if not ids:
                return None
            cur.execute("CREATE TEMP TABLE IF NOT EXISTS _copy_ids (checkpoint_id TEXT PRIMARY KEY)")
            cur.execute("DELETE FROM _copy_ids")
            cur.executemany("INSERT OR IGNORE INTO _copy_ids VALUES (?)", [(i,) for i in ids])
            cur.execute(
                "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
                "parent_checkpoint_id, type, checkpoint, metadata) "
                "SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
                "metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id IN (SELECT checkpoint_id FROM _copy_ids)",
                (dst, thread_id, ns),
            )
            cur.execute(
                f"INSERT OR REPLACE INTO writes ({_WRITE_COLUMNS}) "
                "SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
                "value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id IN (SELECT checkpoint_id FROM _copy_ids)",
                (dst, thread_id, ns),
            )
            # A cycle's closing edge points back into the lineage; the copy's
            # oldest row must be a root so the copy cannot loop.
            oldest = ids[-1]
            cur.execute(
                "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? "
                "AND checkpoint_ns = ? AND checkpoint_id = ?",
                (dst, ns, oldest),
            )
            cur.execute("DELETE FROM _copy_ids")
            return head

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that the given runs created.

        As the base class warns, deleting a run a live DeltaChannel thread
        still replays breaks that thread; tern never calls this on threads it
        shows, it exists for completeness of the saver contract.
        """
        run_ids = [str(r) for r in run_ids]
        if not run_ids:
            return
        marks = ", ".join("?" * len(run_ids))
        with self._transaction() as cur:
            cur.execute(
                "CREATE TEMP TABLE IF NOT EXISTS _doomed "
                "(thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT)"
            )
            cur.execute("DELETE FROM _doomed")
            cur.execute(
                "INSERT INTO _doomed SELECT thread_id, checkpoint_ns, checkpoint_id "
                "FROM checkpoints "
                f"WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') IN ({marks})",
                run_ids,
            )
            cur.execute(
                "DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN "
                "(SELECT thread_id, checkpoint_ns, checkpoint_id FROM _doomed)"
            )
            cur.execute(
                "DELETE FROM checkpoints WHERE (thread_id, checkpoint_ns, checkpoint_id) IN "
                "(SELECT thread_id, checkpoint_ns, checkpoint_id FROM _doomed)"
            )
            cur.execute("DELETE FROM _doomed")

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Drop old checkpoints, keeping what DeltaChannel state needs.

        ``"delete"`` removes the threads' checkpoints and writes.
        ``"keep_latest"`` keeps, per namespace, the head and every ancestor back
        to the nearest one that holds a snapshot of each DeltaChannel the head
        rebuilds by replay (those are the channels listed in the head's
        ``counters_since_delta_snapshot`` metadata and absent from its
        ``channel_values``), plus those ancestors' writes. A thread without
        DeltaChannels keeps only its head. This is the base class's first
        "safe option": nothing a kept checkpoint reads is ever deleted.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}")
        with self._transaction() as cur:
            for thread_id in map(str, thread_ids):
                if strategy == "delete":
                    cur.execute("DELETE FROM writes WHERE thread_id = ?", (thread_id,))
                    cur.execute("DELETE FROM checkpoints WHERE thread_id = ?", (thread_id,))
                    continue
                namespaces = [
                    r[0]
                    for r in cur.execute(
                        "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?",
                        (thread_id,),
                    ).fetchall()
                ]
                for ns in namespaces:
                    head = self._head_checkpoint_id(cur, thread_id, ns)
                    keep = self._prune_keep_set(cur, thread_id, ns, head) if head else []
                    cur.execute("CREATE TEMP TABLE IF NOT EXISTS _keep (checkpoint_id TEXT PRIMARY KEY)")
                    cur.execute("DELETE FROM _keep")
                    cur.executemany("INSERT OR IGNORE INTO _keep VALUES (?)", [(k,) for k in keep])
                    for table in ("writes", "checkpoints"):
                        cur.execute(
                            f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? "
                            "AND checkpoint_id NOT IN (SELECT checkpoint_id FROM _keep)",
                            (thread_id, ns),
                        )
                    cur.execute("DELETE FROM _keep")

    def _prune_keep_set(
        self, cur: sqlite3.Cursor, thread_id: str, ns: str, head: str
    ) -> list[str]:
        keep: list[str] = []
        needed: set[str] | None = None
        seen: set[str] = set()
        # Stream ancestors until every replayed channel has met its snapshot.
        # Iterated lazily (LIMIT -1 is no limit): on a parent cycle the
        # recursion never ends by itself, the repeated id ends it here.
        for cid, _parent, type_, blob, metadata in cur.execute(
            _ANCESTORS_SQL, (thread_id, ns, head, -1)
        ):
            if cid in seen:
                break
            seen.add(cid)
            keep.append(cid)
            checkpoint = self.serde.loads_typed((type_, blob))
            values = checkpoint.get("channel_values", {})
            if needed is None:
                meta = json.loads(metadata) if metadata else {}
                counters = meta.get("counters_since_delta_snapshot") or {}
                needed = {ch for ch in counters if ch not in values}
            else:
                needed -= set(values)
            if not needed:
                break
        return keep

    # ------------------------------------------------------------- lifecycle

    def close(self, timeout: float | None = None) -> None:
        """Wait for in-flight worker calls, then close the connection.

        Closing the connection while a worker thread is inside a statement
        crashed the interpreter here, so this waits for them first; later
        calls raise :class:`SaverClosedError`.
        """
        with self._idle:
            self._closed = True
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=timeout)
        with self.lock:
            self.conn.close()

    @property
    def closed(self) -> bool:
        return self._closed


class _Transaction:
    """The saver lock plus a real transaction: commit on success, roll back on error."""

    def __init__(self, saver: HybridSqliteSaver) -> None:
        self.saver = saver
        self.cur: sqlite3.Cursor | None = None

    def __enter__(self) -> sqlite3.Cursor:
        self.saver.lock.acquire()
        try:
            self.saver.setup()
            # BEGIN IMMEDIATE takes the write lock up front, so a second tern
            # process waits (busy timeout) here rather than failing mid-batch.
            if self.saver.conn.in_transaction:
                self.saver.conn.commit()
            self.saver.conn.execute("BEGIN IMMEDIATE")
            self.cur = self.saver.conn.cursor()
            return self.cur
        except BaseException:
            self.saver.lock.release()
            raise

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is None:
                self.saver.conn.commit()
            else:
                self.saver.conn.rollback()
        finally:
            if self.cur is not None:
                self.cur.close()
            self.saver.lock.release()


class _AncestorWalk:
    """Pages through one lineage; each page is one short hold of the saver lock."""

    def __init__(
        self,
        saver: HybridSqliteSaver,
        config: RunnableConfig,
        *,
        limit: int | None,
        page_size: int,
    ) -> None:
        self.saver = saver
        self.thread_id = str(config["configurable"]["thread_id"])
        self.ns = str(config["configurable"].get("checkpoint_ns", ""))
        self.next_id: str | None = get_checkpoint_id(config)
        self.resolve_head = self.next_id is None
        self.remaining = limit
        self.page_size = max(1, page_size)
        self.seen: set[str] = set()
        self.done = False

    @property
    def exhausted(self) -> bool:
        return self.done or self.remaining == 0

    def next_page(self) -> list[CheckpointTuple]:
        if self.exhausted:
            return []
        size = self.page_size if self.remaining is None else min(self.page_size, self.remaining)
        saver = self.saver
        with saver.cursor(transaction=False) as cur:
            if self.resolve_head:
                self.next_id = saver._head_checkpoint_id(cur, self.thread_id, self.ns)
                self.resolve_head = False
            if self.next_id is None:
                self.done = True
                return []
            rows = cur.execute(
                _ANCESTORS_SQL, (self.thread_id, self.ns, self.next_id, size)
            ).fetchall()
            fresh = []
            for row in rows:
                if row[0] in self.seen:
                    self.done = True
                    break
                self.seen.add(row[0])
                fresh.append(row)
            writes = _writes_for(cur, saver, self.thread_id, self.ns, [r[0] for r in fresh])
        if len(rows) < size:
            self.done = True
        if fresh:
            self.next_id = fresh[-1][1]
            if self.next_id is None:
                self.done = True
        if self.remaining is not None:
            self.remaining -= len(fresh)
        # The first page stays small so a panel opens at once; a caller that
        # keeps reading wants the whole lineage, so later pages grow and the
        # per-query overhead stops mattering.
        self.page_size = min(self.page_size * 4, _MAX_PAGE)
        return [self._tuple(row, writes.get(row[0], [])) for row in fresh]

    def _tuple(self, row: tuple[Any, ...], write_rows: list[Any]) -> CheckpointTuple:
        cid, parent, type_, blob, metadata = row
        serde = self.saver.serde

        def config_for(checkpoint_id: str) -> RunnableConfig:
            return {
                "configurable": {
                    "thread_id": self.thread_id,
                    "checkpoint_ns": self.ns,
                    "checkpoint_id": checkpoint_id,
                }
            }

        return CheckpointTuple(
            config_for(cid),
            serde.loads_typed((type_, blob)),
            cast(CheckpointMetadata, json.loads(metadata) if metadata is not None else {}),
            config_for(parent) if parent else None,
            load_pending_writes(write_rows, serde),
        )


def _writes_for(
    cur: sqlite3.Cursor, saver: SqliteSaver, thread_id: str, ns: str, ids: list[str]
) -> dict[str, list[Any]]:
    """Pending writes for many checkpoints in one query (not one per row)."""
    if not ids:
        return {}
    task_path = "task_path" if saver._has_task_path else "''"
    marks = ", ".join("?" * len(ids))
    by_id: dict[str, list[Any]] = {}
    for cid, *rest in cur.execute(
        f"SELECT checkpoint_id, task_id, channel, type, value, {task_path}, idx FROM writes "
        f"WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id IN ({marks})",
        (thread_id, ns, *ids),
    ):
        by_id.setdefault(cid, []).append(tuple(rest))
    return by_id


def _lineage_ids(cur: sqlite3.Cursor, thread_id: str, ns: str, head: str) -> list[str]:
    ids: list[str] = []
    seen: set[str] = set()
    for cid, _parent in cur.execute(_ANCESTOR_IDS_SQL, (thread_id, ns, head, -1)):
        if cid in seen:
            break
        seen.add(cid)
        ids.append(cid)
    return ids


def _has_table(cur: sqlite3.Cursor, name: str) -> bool:
    return (
        cur.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        is not None
    )


def connect(path: str | Path) -> sqlite3.Connection:
    """Open tern's database file: private, WAL, waits on a busy writer."""
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Create the file 0600 before SQLite does, so it never exists world-readable.
    if not path.exists():
        path.touch(mode=0o600)
    path.chmod(0o600)
    conn = sqlite3.connect(
        str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_S
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    return conn


def open_checkpointer(path: str | Path) -> HybridSqliteSaver:
    """The one way to open tern's checkpointer on a database file."""
    saver = HybridSqliteSaver(connect(path))
    with saver.cursor():
        pass  # runs setup() under the lock: creates LangGraph's tables
    return saver
