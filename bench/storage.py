"""Database size per turn: plain add_messages vs tern's DeltaChannel state.

Each turn is a ~1 KB question and a ~1 KB answer through a real graph and
the real checkpointer, on a file. Prints bytes after 200 and 1,000 turns and
the marginal bytes per turn in each stretch (flat = cost of the new message
only).

    uv run python bench/storage.py
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, TypedDict

from _common import ROOT  # noqa: F401  (puts the project on sys.path)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph.message import add_messages

from graphs.chat import single_model_graph
from graphs.checkpointer import open_checkpointer
from graphs.state import ChatState

CHECKPOINTS = (200, 1000)


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def file_bytes(path: Path, saver) -> int:
    saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return os.path.getsize(path)


def measure(state_type, path: Path) -> dict[int, int]:
    saver = open_checkpointer(path)

    def answer(state):
        return {"messages": [AIMessage("a" * 1000)]}

    graph = single_model_graph(state_type, answer, saver)
    config = {"configurable": {"thread_id": "t"}}
    sizes = {0: file_bytes(path, saver)}
    for turn in range(1, max(CHECKPOINTS) + 1):
        graph.invoke({"messages": [HumanMessage(f"{turn} " + "q" * 1000)]}, config)
        if turn in CHECKPOINTS:
            sizes[turn] = file_bytes(path, saver)
    assert len(graph.get_state(config).values["messages"]) == 2 * max(CHECKPOINTS)
    saver.close()
    return sizes


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        free = shutil.disk_usage(folder).free
        if free < 6e9:  # the add_messages file reaches ~3.6 GB at 1,000 turns
            raise SystemExit(f"needs ~6 GB free in {folder}, has {free / 1e9:.1f} GB")
        plain = measure(PlainState, Path(folder) / "plain.db")
        delta = measure(ChatState, Path(folder) / "delta.db")
    print(f"{'turns':>6} {'add_messages':>14} {'tern (delta)':>14}   {'per turn: plain':>16} {'tern':>10}")
    previous = 0
    for turns in CHECKPOINTS:
        span = turns - previous
        p_rate = (plain[turns] - plain[previous]) / span
        d_rate = (delta[turns] - delta[previous]) / span
        print(f"{turns:>6} {plain[turns] / 1e6:>11.1f} MB {delta[turns] / 1e6:>11.2f} MB   "
              f"{p_rate / 1e3:>13.1f} KB {d_rate / 1e3:>7.1f} KB   (turns {previous + 1}-{turns})")
        previous = turns
    print("tern's per-turn cost is the new messages plus a full snapshot every "
          "SNAPSHOT_EVERY updates, amortised (graphs/state.py).")


if __name__ == "__main__":
    main()
