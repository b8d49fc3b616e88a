"""tern's message channel: small on disk, identical on read, prune-safe."""

from __future__ import annotations

from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import add_messages

from graphs.chat import single_model_graph
from graphs.checkpointer import open_checkpointer
from graphs.state import ChatState, fold_messages


class FrequentSnapshots(TypedDict):
    messages: Annotated[list[AnyMessage], DeltaChannel(fold_messages, snapshot_frequency=20)]


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def build(state_type, saver):
    def answer(state):
        return {"messages": [AIMessage("a" * 1000)]}

    return single_model_graph(state_type, answer, saver)


def run_turns(graph, thread, turns):
    config = {"configurable": {"thread_id": thread}}
    for i in range(turns):
        graph.invoke({"messages": [HumanMessage(f"question {i} " + "q" * 1000)]}, config)
    return config


def test_fold_is_batching_invariant():
    xs = [[HumanMessage("a", id="1")], [AIMessage("b", id="2")]]
    ys = [[HumanMessage("c", id="3")], [AIMessage("b2", id="2")]]
    assert fold_messages(fold_messages([], xs), ys) == fold_messages([], xs + ys)


def test_delta_channel_reads_back_like_add_messages_and_stays_small(tmp_path):
    plain_saver = open_checkpointer(tmp_path / "plain.db")
    delta_saver = open_checkpointer(tmp_path / "delta.db")
    try:
        plain = build(PlainState, plain_saver)
        delta = build(ChatState, delta_saver)
        run_turns(plain, "t", 40)
        config = run_turns(delta, "t", 40)
        strip = lambda ms: [(type(m).__name__, m.content) for m in ms]  # noqa: E731
        assert strip(delta.get_state(config).values["messages"]) == strip(
            plain.get_state(config).values["messages"])
        size = lambda s: sum(len(r[0] or b"") for r in s.conn.execute("SELECT checkpoint FROM checkpoints"))  # noqa: E731
        assert size(delta_saver) * 10 < size(plain_saver)
        head = delta.get_state(config).config  # by id: after a fork "latest" is the fork
        # a fork from an early checkpoint reads back the early state plus the new turn
        history = list(delta.get_state_history(config))
        early = next(s for s in history if len(s.values.get("messages", [])) == 4 and not s.next)
        forked = delta.invoke({"messages": [HumanMessage("fork")]}, early.config)
        assert [m.content for m in forked["messages"]][:4] == [m.content for m in early.values["messages"]]
        assert forked["messages"][4].content == "fork" and len(forked["messages"]) == 6
        # and the original branch is unchanged
        assert len(delta.get_state(head).values["messages"]) == 80
    finally:
        plain_saver.close()
        delta_saver.close()


def test_prune_keep_latest_keeps_delta_state_whole(tmp_path):
    saver = open_checkpointer(tmp_path / "prune.db")
    try:
        graph = build(FrequentSnapshots, saver)
        config = run_turns(graph, "t", 25)  # 50 updates: snapshots at the 20th and 40th
        before = graph.get_state(config).values["messages"]
        count = lambda: saver.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]  # noqa: E731
        total = count()
        saver.prune(["t"], strategy="keep_latest")
        assert count() < total
        after = graph.get_state(config).values["messages"]
        assert [m.content for m in after] == [m.content for m in before]
        assert len(after) == 50
    finally:
        saver.close()
