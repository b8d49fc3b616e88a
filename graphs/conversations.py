"""The conversation service: the one place that runs turns.

Everything that changes a thread — send, retry, cancel-and-save, branch,
rename, delete — holds that thread's lock (in-process and across processes,
see :mod:`graphs.locks`) and addresses the thread's stored head by id
(DESIGN invariant 5). The TUI calls these methods and renders what they
yield; it holds no turn logic of its own.

A turn, as :meth:`Conversations.send` runs it::

    async with lock(thread):
        head  = stored head                          # where the user is looking
        after = aupdate_state(head, human, START)    # the user's words are durable now
        async for chunk in graph.astream(None, after, stream_mode=["messages", "checkpoints"]):
            yield Token(...)
        head  = the last checkpoint of the run

Cancelling the task that iterates a turn closes the model's HTTP stream at
once; the text streamed so far is then saved as the model node's answer,
marked ``finish_reason="cancelled"``, so nothing is pending afterwards.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, HumanMessage
from langgraph.graph import START
from langgraph.graph.state import CompiledStateGraph

from graphs.chat import build_chat_graph
from graphs.config import Settings
from graphs.database import Database, open_database
from graphs.locks import ThreadLocks
from graphs.models import ModelProblem, describe_model_error, make_chat_model
from graphs.source_chat import build_source_chat_graph
from graphs.sources import load_source
from graphs.state import MODEL_NODE
from graphs.storage import SourceRow, ThreadKind, ThreadRow

CANCELLED = "cancelled"
TITLE_CHARS = 60


# --------------------------------------------------------------------- events


@dataclass(frozen=True)
class TurnStarted:
    thread_id: str
    human: HumanMessage | None  # None for a retry of the message already there


@dataclass(frozen=True)
class Token:
    text: str


@dataclass(frozen=True)
class TurnFinished:
    message: AIMessage
    input_tokens: int | None
    output_tokens: int | None
    seconds: float


@dataclass(frozen=True)
class TurnFailed:
    problem: ModelProblem


TurnEvent = TurnStarted | Token | TurnFinished | TurnFailed


class ConversationError(Exception):
    """A request the service cannot carry out; the message says why."""


@dataclass(frozen=True)
class ThreadView:
    """What a screen needs to show a thread at its head."""

    thread: ThreadRow
    messages: list[AnyMessage]
    pending: bool  # the last user message has no answer yet (error or crash)
    error: str | None  # what stopped the last answer, when it failed
    head_checkpoint_id: str | None = None


def is_cancelled(message: AnyMessage) -> bool:
    return isinstance(message, AIMessage) and message.response_metadata.get("finish_reason") == CANCELLED


def auto_title(text: str) -> str:
    first = " ".join(text.strip().split())
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


def thread_config(thread_id: str, checkpoint_id: str | None = None) -> dict:
    """The config that addresses a thread's root namespace (at ``checkpoint_id``)."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _checkpoint_id(config: dict) -> str:
    return config["configurable"]["checkpoint_id"]


# -------------------------------------------------------------------- service


class Conversations:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        *,
        model_factory: Callable[[], BaseChatModel] | None = None,
        lock_wait_seconds: float = 30.0,
    ) -> None:
        self.db = db
        self.settings = settings
        self._model_factory = model_factory or (lambda: make_chat_model(settings.model))
        self._model: BaseChatModel | None = None
        self.chat_graph = build_chat_graph(db.saver, self.model, lambda: settings.model.system_prompt)
        self.source_graph = build_source_chat_graph(
            db.saver, self.model, db.store.get_source, lambda: settings.source.token_budget
        )
        self.locks = ThreadLocks(
            db.path.with_name(db.path.name + ".locks"), wait_seconds=lock_wait_seconds
        )

    @classmethod
    def open(cls, settings: Settings, **kwargs: Any) -> Conversations:
        return cls(open_database(settings.database), settings, **kwargs)

    def close(self) -> None:
        self.db.close()

    def model(self) -> BaseChatModel:
        if self._model is None:
            self._model = self._model_factory()
        return self._model

    def graph_for(self, thread: ThreadRow) -> CompiledStateGraph:
        return self.source_graph if thread.kind == "source" else self.chat_graph

    # ------------------------------------------------------------- threads

    async def _thread(self, thread_id: str) -> ThreadRow:
        thread = await asyncio.to_thread(self.db.store.get_thread, thread_id)
        if thread is None:
            raise ConversationError(f"No conversation {thread_id!r}; it may have been deleted.")
        return thread

    async def create_thread(
        self, kind: ThreadKind = "chat", *, title: str = "", source: SourceRow | None = None
    ) -> ThreadRow:
        if kind == "source" and source is None:
            raise ConversationError("A source chat needs a source.")
        thread_id = str(uuid.uuid4())
        thread = await asyncio.to_thread(
            self.db.store.create_thread, thread_id, kind, title=title or (source.title if source else ""),
            source_id=source.id if source else None,
        )
        if source is not None:
            # The source id is part of the graph state from the first checkpoint on.
            config = await self.source_graph.aupdate_state(
                thread_config(thread_id), {"source_id": source.id, "messages": []}, as_node=MODEL_NODE
            )
            await asyncio.to_thread(self.db.store.set_head, thread_id, _checkpoint_id(config))
            thread = await self._thread(thread_id)
        return thread

    async def load_source(self, spec: str) -> SourceRow:
        """Read a file or URL and store it; raises SourceError with a readable message."""
        loaded = await load_source(spec, max_bytes=self.settings.source.max_bytes)
        return await asyncio.to_thread(
            self.db.store.put_source, title=loaded.title, origin=loaded.origin,
            media_type=loaded.media_type, text=loaded.text,
        )

    async def new_source_chat(self, spec: str) -> ThreadRow:
        source = await self.load_source(spec)
        return await self.create_thread("source", source=source)

    async def list_threads(self, limit: int = 200) -> list[ThreadRow]:
        return await asyncio.to_thread(self.db.store.list_threads, limit=limit)

    async def search_threads(self, query: str, limit: int = 200) -> list[ThreadRow]:
        return await asyncio.to_thread(self.db.store.search_threads, query, limit=limit)

    async def get_thread(self, thread_id: str) -> ThreadRow:
        return await self._thread(thread_id)

    async def get_source(self, source_id: str) -> SourceRow | None:
        return await asyncio.to_thread(self.db.store.get_source, source_id)

    async def rename(self, thread_id: str, title: str) -> ThreadRow:
        title = " ".join(title.split())
        if not title:
            raise ConversationError("A title cannot be empty.")
        async with self.locks.hold(thread_id):
            await self._thread(thread_id)
            await asyncio.to_thread(self.db.store.rename_thread, thread_id, title)
        return await self._thread(thread_id)

    async def delete(self, thread_id: str) -> None:
        async with self.locks.hold(thread_id):
            await asyncio.to_thread(self.db.store.delete_thread, thread_id)
            await self.db.saver.adelete_thread(thread_id)
        self.locks.forget(thread_id)

    # ------------------------------------------------------------- reading

    async def _state(self, thread: ThreadRow, checkpoint_id: str) -> Any:
        """The graph state at a checkpoint, rebuilt on a worker thread.

        Rebuilding a long thread's messages (DeltaChannel replay, deserialising
        thousands of messages) took ~250 ms at 10,000 checkpoints; on the event
        loop that froze the screen.
        """
        return await asyncio.to_thread(self.graph_for(thread).get_state, thread_config(thread.id, checkpoint_id))

    async def head(self, thread_id: str) -> str | None:
        return (await self._thread(thread_id)).head_checkpoint_id

    async def view(self, thread_id: str, checkpoint_id: str | None = None) -> ThreadView:
        """The conversation at its head (or at ``checkpoint_id``, read-only)."""
        thread = await self._thread(thread_id)
        at = checkpoint_id or thread.head_checkpoint_id
        if at is None:
            return ThreadView(thread, [], False, None, None)
        snapshot = await self._state(thread, at)
        messages = list(snapshot.values.get("messages", []))
        pending = MODEL_NODE in snapshot.next
        error = None
        if pending:
            stored = next((t.error for t in snapshot.tasks if t.error), None)
            error = thread.last_error or (str(stored) if stored else None)
        return ThreadView(thread, messages, pending, error, at)

    async def messages(self, thread_id: str, checkpoint_id: str | None = None) -> list[AnyMessage]:
        return (await self.view(thread_id, checkpoint_id)).messages

    # ------------------------------------------------------------- turns

    async def send(self, thread_id: str, text: str) -> AsyncIterator[TurnEvent]:
        """Append the user's message, then stream the answer."""
        if not text.strip():
            raise ConversationError("Type a message first.")
        async with self.locks.hold(thread_id):
            thread = await self._thread(thread_id)
            human = HumanMessage(text)
            after = await self._append_human(thread, thread.head_checkpoint_id, human)
            if not thread.title:
                await asyncio.to_thread(self.db.store.rename_thread, thread_id, auto_title(text))
            await asyncio.to_thread(self.db.store.index_text, thread_id, text)
            yield TurnStarted(thread_id, human)
            async with aclosing(self._run(thread, after)) as run:
                async for event in run:
                    yield event

    async def retry(self, thread_id: str) -> AsyncIterator[TurnEvent]:
        """Run the model again for a user message left unanswered (error, crash)."""
        async with self.locks.hold(thread_id):
            thread = await self._thread(thread_id)
            head = thread.head_checkpoint_id
            snapshot = await self._state(thread, head) if head else None
            if snapshot is None or MODEL_NODE not in snapshot.next:
                raise ConversationError("Nothing to retry: the last message was answered.")
            yield TurnStarted(thread_id, None)
            async with aclosing(self._run(thread, thread_config(thread_id, head))) as run:
                async for event in run:
                    yield event

    async def branch(self, thread_id: str, checkpoint_id: str, text: str | None = None) -> AsyncIterator[TurnEvent]:
        """Re-ask (``text=None``) or edit the user message at ``checkpoint_id``.

        The new message becomes a sibling of the old one (same parent), so
        the old branch stays reachable; the thread's head moves to the new
        branch and the model answers there.
        """
        async with self.locks.hold(thread_id):
            thread = await self._thread(thread_id)
            snapshot = await self._state(thread, checkpoint_id)
            messages = snapshot.values.get("messages", [])
            if not messages or not isinstance(messages[-1], HumanMessage):
                raise ConversationError("Branching starts from a user message.")
            parent = snapshot.parent_config
            human = HumanMessage(text if text is not None else messages[-1].text)
            if not str(human.content).strip():
                raise ConversationError("Type a message first.")
            after = await self._append_human(
                thread, _checkpoint_id(parent) if parent else None, human
            )
            await asyncio.to_thread(self.db.store.index_text, thread_id, str(human.content))
            yield TurnStarted(thread_id, human)
            async with aclosing(self._run(thread, after)) as run:
                async for event in run:
                    yield event

    async def checkout(self, thread_id: str, checkpoint_id: str) -> None:
        """Make ``checkpoint_id`` the head: the next message continues from there."""
        async with self.locks.hold(thread_id):
            await self._thread(thread_id)
            if await self.db.saver.aget_tuple(thread_config(thread_id, checkpoint_id)) is None:
                raise ConversationError("That point of the conversation no longer exists.")
            await asyncio.to_thread(self.db.store.set_head, thread_id, checkpoint_id)

    async def copy_to_new_thread(self, thread_id: str, checkpoint_id: str | None = None) -> ThreadRow:
        """That lineage (head, or ``checkpoint_id``, back to the root) as a thread of its own."""
        async with self.locks.hold(thread_id):
            thread = await self._thread(thread_id)
            at = checkpoint_id or thread.head_checkpoint_id
            if at is None:
                raise ConversationError("An empty conversation has nothing to copy.")
            new_id = str(uuid.uuid4())
            copied = await self.db.saver.acopy_lineage(thread_config(thread_id, at), new_id)
            if copied is None:
                raise ConversationError("That point of the conversation no longer exists.")
            store = self.db.store
            await asyncio.to_thread(
                store.create_thread, new_id, thread.kind,
                title=f"{thread.title or 'Untitled'} (copy)", source_id=thread.source_id,
            )
            await asyncio.to_thread(store.set_head, new_id, copied)
            messages = await self.messages(new_id)
            await asyncio.to_thread(store.index_texts, new_id, [str(m.text) for m in messages])
        return await self._thread(new_id)

    async def _append_human(self, thread: ThreadRow, head: str | None, human: HumanMessage) -> dict:
        """Checkpoint the user's message before any model call (invariant 7)."""
        graph = self.graph_for(thread)
        after = await graph.aupdate_state(
            thread_config(thread.id, head), {"messages": [human]}, as_node=START
        )
        await asyncio.to_thread(self.db.store.set_head, thread.id, _checkpoint_id(after))
        return after

    async def _run(self, thread: ThreadRow, start: dict) -> AsyncIterator[TurnEvent]:
        graph = self.graph_for(thread)
        started = time.monotonic()
        shown: list[str] = []  # the text the consumer has received: what is on screen
        last: dict | None = None  # the run's newest checkpoint event: its config and values
        try:
            # aclosing: when the turn is abandoned (the consumer's task
            # cancelled, or the consumer closing us while it was busy
            # rendering), LangGraph's stream is closed at once, which cancels
            # the model call and closes its HTTP stream.
            async with aclosing(graph.astream(
                None, start, stream_mode=["messages", "checkpoints"], durability="sync"
            )) as stream:
                async for mode, payload in stream:
                    if mode == "messages":
                        chunk, meta = payload
                        if meta.get("langgraph_node") != MODEL_NODE or not isinstance(chunk, AIMessageChunk):
                            continue
                        if piece := str(chunk.text):
                            shown.append(piece)
                            yield Token(piece)
                    else:
                        last = payload
        except Exception as exc:  # the model failed; the user's message stays
            problem = describe_model_error(exc, self.settings.model)
            await asyncio.to_thread(self.db.store.set_error, thread.id, str(problem))
            yield TurnFailed(problem)
            return
        except BaseException:  # cancelled, or closed by the consumer, mid-answer
            # Shielded: a second Esc or an app shutdown must not lose the partial answer.
            await asyncio.shield(self._save_cancelled(thread, start, "".join(shown)))
            raise
        assert last is not None  # a completed run always checkpoints the model's answer
        await asyncio.to_thread(self.db.store.set_head, thread.id, _checkpoint_id(last["config"]))
        await asyncio.to_thread(self.db.store.set_error, thread.id, None)
        # The event carries the state LangGraph already holds; reading it back
        # from the database would replay the whole thread once more per turn.
        answer = last["values"]["messages"][-1]
        usage = getattr(answer, "usage_metadata", None) or {}
        await asyncio.to_thread(self.db.store.index_text, thread.id, str(answer.text))
        yield TurnFinished(answer, usage.get("input_tokens"), usage.get("output_tokens"),
                           time.monotonic() - started)

    async def _save_cancelled(self, thread: ThreadRow, start: dict, text: str) -> None:
        # Text only: whatever tool-call fragments streamed are dropped, since a
        # half call saved as a call would be "executed" on the next turn.
        partial = AIMessage(text, response_metadata={"finish_reason": CANCELLED})
        after = await self.graph_for(thread).aupdate_state(
            start, {"messages": [partial]}, as_node=MODEL_NODE
        )
        await asyncio.to_thread(self.db.store.set_head, thread.id, _checkpoint_id(after))
        if text:
            await asyncio.to_thread(self.db.store.index_text, thread.id, text)

    # ------------------------------------------------------------- export

    async def export_markdown(self, thread_id: str, path: str | Path | None = None) -> str:
        """The current branch as Markdown; written to ``path`` when given."""
        from graphs.export import to_markdown

        view = await self.view(thread_id)
        source = await self.get_source(view.thread.source_id) if view.thread.source_id else None
        text = to_markdown(view.thread, view.messages, source)
        if path is not None:
            await asyncio.to_thread(Path(path).expanduser().write_text, text, encoding="utf-8")
        return text
