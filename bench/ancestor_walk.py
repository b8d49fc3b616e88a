"""Ancestor walk vs id-ordered list() on long chains.

Prints one table: for chains of 1,000 / 2,000 / 4,000 / 10,000 checkpoints
with increasing and with decreasing ids, the time of `list()` (what
`get_state_history` uses), the full ancestor walk, and the first page of 50.

    uv run python bench/ancestor_walk.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402
from langgraph.checkpoint.base.id import uuid6  # noqa: E402

from graphs.checkpointer import open_checkpointer  # noqa: E402

SIZES = (1_000, 2_000, 4_000, 10_000)


def build(saver, thread: str, n: int, decreasing: bool) -> str:
    ids = [str(uuid6()) for _ in range(n)]
    if decreasing:
        ids.reverse()
    parent = None
    with saver.lock:
        saver.conn.execute("BEGIN")
    for i, cid in enumerate(ids):
        cp = empty_checkpoint()
        cp["id"] = cid
        cp["channel_values"] = {"step": i}
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        if parent:
            config["configurable"]["checkpoint_id"] = parent
        saver.put(config, cp, {"step": i}, {})
        saver.put_writes({"configurable": {"thread_id": thread, "checkpoint_ns": "",
                                           "checkpoint_id": cid}}, [("step", i)], "task")
        parent = cid
    return parent


def best_of(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        saver = open_checkpointer(Path(folder) / "bench.db")
        rows = []
        for decreasing in (False, True):
            for n in SIZES:
                thread = f"{n}-{'dec' if decreasing else 'inc'}"
                head = build(saver, thread, n, decreasing)
                config = {"configurable": {"thread_id": thread, "checkpoint_ns": "",
                                           "checkpoint_id": head}}
                plain = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
                runs = 5 if n <= 4_000 else 3
                t_list = best_of(lambda: list(saver.list(plain)), runs)
                t_walk = best_of(lambda: list(saver.ancestors(config)), runs)
                t_page = best_of(lambda: list(saver.ancestors(config, limit=50)), 20)
                assert len(list(saver.ancestors(config))) == n
                rows.append((n, "decreasing" if decreasing else "increasing", t_list, t_walk, t_page))
        saver.close()
    print(f"{'chain':>7} {'ids':>11} {'list() ms':>10} {'walk ms':>9} {'first 50 ms':>12} "
          f"{'list/first50':>13} {'list/walk':>10}")
    for n, order, t_list, t_walk, t_page in rows:
        print(f"{n:>7} {order:>11} {t_list:>10.1f} {t_walk:>9.1f} {t_page:>12.2f} "
              f"{t_list / t_page:>12.0f}x {t_list / t_walk:>9.2f}x")


if __name__ == "__main__":
    main()
