"""A thread's history as a person reads it: the head's lineage, one row per event.

Built on the checkpointer's ancestor walk, never on id-ordered ``list()``
(which mixes branches after a fork and misses out-of-order parents). Each
row is a checkpoint that changed what the user sees — a question, an answer,
a cancelled answer, a failure, an attached source; bookkeeping checkpoints
(LangGraph's empty input step) are folded away.

What a checkpoint added is read without rebuilding state: DeltaChannel keeps
a step's new messages as writes on the step's parent (the next row of the
walk), or, for the first checkpoint and for forks, as a snapshot in the
checkpoint itself.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from graphs.conversations import thread_config

if TYPE_CHECKING:
    from graphs.conversations import Conversations

EntryKind = Literal["user", "answer", "cancelled", "error", "source"]
PREVIEW_CHARS = 80
PAGE = 50


@dataclass(frozen=True)
class HistoryEntry:
    checkpoint_id: str
    parent_id: str | None
    step: int
    at: datetime | None
    kind: EntryKind
    preview: str
    branches: int  # alternatives at this point: the parent's children, this one included
    is_head: bool = False


@dataclass(frozen=True)
class HistoryPage:
    entries: list[HistoryEntry]
    next_from: str | None  # pass to page() for older rows; None at the root


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _messages_in(value: Any) -> list[BaseMessage]:
    if isinstance(value, _DeltaSnapshot):
        value = value.value
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, list):
        return [m for m in value if isinstance(m, BaseMessage)]
    return []


def added_message(tup: CheckpointTuple, parent: CheckpointTuple | None) -> BaseMessage | None:
    """The message this checkpoint appended, if any."""
    values = tup.checkpoint.get("channel_values", {})
    if "messages" in values:  # a snapshot: the step's message is its last
        snapshot = _messages_in(values["messages"])
        return snapshot[-1] if snapshot else None
    if parent is not None:
        written = [m for _, ch, v in parent.pending_writes or [] if ch == "messages" for m in _messages_in(v)]
        if written:
            return written[-1]
    return None


def _error(tup: CheckpointTuple) -> str | None:
    for _, channel, value in tup.pending_writes or []:
        if channel == "__error__" and not _is_cancellation(value):
            return str(value)
    return None


def _is_cancellation(value: object) -> bool:
    """LangGraph records a cancelled task as an error write (stored as its repr).

    The user stopped that answer; the history shows it as the saved partial
    answer, not as an error as well.
    """
    return isinstance(value, asyncio.CancelledError) or (
        isinstance(value, str) and value.startswith("CancelledError("))


def _at(tup: CheckpointTuple) -> datetime | None:
    try:
        return datetime.fromisoformat(tup.checkpoint["ts"])
    except (KeyError, ValueError, TypeError):
        return None


def entries_for(
    walked: list[CheckpointTuple], parent_of_last: CheckpointTuple | None,
    counts: dict[str, int], head: str | None,
) -> list[HistoryEntry]:
    entries: list[HistoryEntry] = []
    for i, tup in enumerate(walked):
        parent = walked[i + 1] if i + 1 < len(walked) else parent_of_last
        cid = tup.config["configurable"]["checkpoint_id"]
        parent_id = tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None
        branches = counts.get(parent_id, 1) if parent_id else 1
        common = dict(checkpoint_id=cid, parent_id=parent_id, step=int(tup.metadata.get("step", 0)),
                      at=_at(tup), branches=branches, is_head=cid == head)
        if error := _error(tup):
            entries.append(HistoryEntry(kind="error", preview=_preview(error), **common))
        message = added_message(tup, parent)
        if isinstance(message, HumanMessage):
            entries.append(HistoryEntry(kind="user", preview=_preview(str(message.text)), **common))
        elif isinstance(message, AIMessage):
            cancelled = message.response_metadata.get("finish_reason") == "cancelled"
            entries.append(HistoryEntry(
                kind="cancelled" if cancelled else "answer",
                preview=_preview(str(message.text)) or "(no text)", **common))
        elif tup.checkpoint.get("channel_values", {}).get("source_id") and parent is None:
            entries.append(HistoryEntry(kind="source", preview="source attached", **common))
    return entries


class History:
    """Pages of a thread's lineage, newest first, for the history panel."""

    def __init__(self, conversations: Conversations) -> None:
        self.conversations = conversations
        self.saver = conversations.db.saver

    async def page(self, thread_id: str, start: str | None = None, limit: int = PAGE) -> list[HistoryEntry]:
        return (await self.read(thread_id, start, limit)).entries

    async def read(self, thread_id: str, start: str | None = None, limit: int = PAGE) -> HistoryPage:
        """Up to ``limit`` checkpoints of the lineage from ``start`` (default: the head)."""
        head = await self.conversations.head(thread_id)
        start = start or head
        if start is None:
            return HistoryPage([], None)
        config = thread_config(thread_id, start)
        # One extra row: a checkpoint's parent says what the checkpoint added.
        walked = [t async for t in self.saver.aancestors(config, limit=limit + 1, page_size=limit + 1)]
        extra = walked[limit] if len(walked) > limit else None
        walked = walked[:limit]
        parent_ids = [t.parent_config["configurable"]["checkpoint_id"] for t in walked if t.parent_config]
        counts = await asyncio.to_thread(self.saver.children_counts, thread_id, parent_ids)
        entries = entries_for(walked, extra, counts, head)
        next_from = extra.config["configurable"]["checkpoint_id"] if extra else None
        return HistoryPage(entries, next_from)

    async def siblings(self, thread_id: str, checkpoint_id: str) -> list[HistoryEntry]:
        """The alternatives at a point: the entry and its siblings, oldest first."""
        tup = await self.saver.aget_tuple(thread_config(thread_id, checkpoint_id))
        if tup is None or tup.parent_config is None:
            return []
        parent_id = tup.parent_config["configurable"]["checkpoint_id"]
        parent = await self.saver.aget_tuple(tup.parent_config)
        ids = await asyncio.to_thread(self.saver.children, thread_id, parent_id)
        out = []
        for cid in ids:
            child = await self.saver.aget_tuple(thread_config(thread_id, cid))
            if child is not None:
                out.extend(entries_for([child], parent, {parent_id: len(ids)}, None))
        return out

    async def switch_to(self, thread_id: str, checkpoint_id: str) -> str:
        """Make the branch through ``checkpoint_id`` current; returns the new head."""
        tip = await asyncio.to_thread(self.saver.branch_tip, thread_id, checkpoint_id)
        await self.conversations.checkout(thread_id, tip)
        return tip
