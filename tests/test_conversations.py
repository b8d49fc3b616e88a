"""The conversation service over real HTTP to the stub OpenAI server."""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from graphs.config import ModelSettings, Settings, SourceSettings
from graphs.conversations import (
    ConversationError,
    Conversations,
    Token,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    is_cancelled,
)
from graphs.storage import check_integrity

from .stub_openai import Reply, StubOpenAI


@pytest.fixture
def stub():
    with StubOpenAI() as server:
        yield server


def make_settings(tmp_path, stub=None, **model) -> Settings:
    model_settings = ModelSettings(
        provider="openai" if stub else "offline",
        name="stub-model",
        base_url=stub.base_url if stub else "",
        api_key_env="TERN_TEST_KEY",
        timeout=model.pop("timeout", 5.0),
        **model,
    )
    return Settings(model=model_settings, source=SourceSettings(token_budget=400),
                    database=tmp_path / "tern.db")


@pytest.fixture
def service(tmp_path, stub):
    conversations = Conversations.open(make_settings(tmp_path, stub))
    yield conversations
    conversations.close()


async def collect(events):
    return [e async for e in events]


def texts(messages):
    return [(type(m).__name__, str(m.text)) for m in messages]


async def test_send_streams_and_saves_the_answer(service, stub):
    stub.push(Reply(text="Hello there, friend."))
    thread = await service.create_thread()
    events = await collect(service.send(thread.id, "Hi!"))
    assert isinstance(events[0], TurnStarted)
    assert "".join(e.text for e in events if isinstance(e, Token)) == "Hello there, friend."
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.output_tokens == 3
    assert texts(await service.messages(thread.id)) == [
        ("HumanMessage", "Hi!"), ("AIMessage", "Hello there, friend.")]
    assert (await service.get_thread(thread.id)).title == "Hi!"
    # the request the model saw carried the conversation
    assert stub.requests[-1].body["messages"][-1] == {"role": "user", "content": "Hi!"}


async def test_second_turn_sees_the_first(service, stub):
    thread = await service.create_thread()
    stub.push(Reply(text="one"), Reply(text="two"))
    await collect(service.send(thread.id, "first"))
    await collect(service.send(thread.id, "second"))
    sent = [m["content"] for m in stub.requests[-1].body["messages"]]
    assert sent == ["first", "one", "second"]


async def test_overlapping_sends_lose_nothing(service, stub):
    stub.state.default = Reply(text="ok then", pace=0.002)
    thread = await service.create_thread()
    await asyncio.gather(*(collect(service.send(thread.id, f"m{i}")) for i in range(6)))
    messages = await service.messages(thread.id)
    humans = [str(m.text) for m in messages if isinstance(m, HumanMessage)]
    assert sorted(humans) == [f"m{i}" for i in range(6)]
    # strictly alternating: every answer follows its own question
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage"] * 6


async def test_cancel_closes_the_stream_and_keeps_the_partial_answer(service, stub):
    stub.push(Reply(text="word " * 200, pace=0.01))
    thread = await service.create_thread()
    seen = []

    async def run():
        async for event in service.send(thread.id, "tell me a long story"):
            if isinstance(event, Token):
                seen.append(event.text)

    task = asyncio.create_task(run())
    while len(seen) < 5:
        await asyncio.sleep(0.005)
    cancelled_at = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    disconnect = await asyncio.to_thread(stub.wait_for_disconnect)
    assert disconnect.at - cancelled_at < 1.0
    assert disconnect.chunks_sent < 200
    view = await service.view(thread.id)
    assert not view.pending
    assert view.messages[0].text == "tell me a long story"
    partial = view.messages[-1]
    assert is_cancelled(partial)
    assert str(partial.text) == "".join(seen)
    # the thread goes on normally afterwards
    stub.push(Reply(text="fine"))
    await collect(service.send(thread.id, "next"))
    assert texts(await service.messages(thread.id))[-2:] == [("HumanMessage", "next"), ("AIMessage", "fine")]


@pytest.mark.parametrize("how", ["cancel between events", "stop iterating"])
async def test_abandoning_a_turn_between_events_still_closes_the_stream(service, stub, how):
    """The consumer may be busy elsewhere (rendering) when it is cancelled, or
    may just stop iterating: either way, once it closes the turn (aclosing, as
    the TUI does), the HTTP stream closes and the partial answer is saved."""
    stub.push(Reply(text="word " * 300, pace=0.01))
    thread = await service.create_thread()
    seen = []
    busy = asyncio.Event()

    async def run():
        events = service.send(thread.id, "go")
        if how == "stop iterating":
            async with aclosing(events):
                async for event in events:
                    if isinstance(event, Token):
                        seen.append(event.text)
                        if len(seen) == 5:
                            return
        else:
            async with aclosing(events):
                async for event in events:
                    if isinstance(event, Token):
                        seen.append(event.text)
                        if len(seen) == 5:
                            busy.set()
                            await asyncio.sleep(10)  # e.g. a slow repaint

    task = asyncio.create_task(run())
    if how == "cancel between events":
        await busy.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        await task
    disconnect = await asyncio.to_thread(stub.wait_for_disconnect)
    assert disconnect.chunks_sent < 300
    partial = (await service.messages(thread.id))[-1]
    assert is_cancelled(partial) and str(partial.text).startswith("word word")
    assert not (await service.view(thread.id)).pending


async def test_cancel_during_a_tool_call_saves_text_only(service, stub):
    stub.push(Reply(text="Let me look that up. ", tool_call=True, stall_after=5))
    thread = await service.create_thread()
    task = asyncio.create_task(collect(service.send(thread.id, "look it up")))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    partial = (await service.messages(thread.id))[-1]
    assert isinstance(partial, AIMessage) and is_cancelled(partial)
    assert partial.tool_calls == [] and not partial.additional_kwargs.get("tool_calls")
    assert str(partial.text) == "Let me look that up. "


@pytest.mark.parametrize(
    "status, kind", [(401, "auth"), (429, "rate_limit"), (500, "server"), (503, "server")]
)
async def test_errors_are_readable_and_retry_does_not_duplicate(service, stub, status, kind):
    thread = await service.create_thread()
    stub.push(Reply(status=status))
    events = await collect(service.send(thread.id, "hello?"))
    failed = events[-1]
    assert isinstance(failed, TurnFailed) and failed.problem.kind == kind
    assert "retry" in str(failed.problem).lower() or "check" in str(failed.problem).lower()
    view = await service.view(thread.id)
    assert view.pending and texts(view.messages) == [("HumanMessage", "hello?")]
    stub.push(Reply(text="back again"))
    events = await collect(service.retry(thread.id))
    assert isinstance(events[-1], TurnFinished)
    assert texts(await service.messages(thread.id)) == [
        ("HumanMessage", "hello?"), ("AIMessage", "back again")]
    assert [m["content"] for m in stub.requests[-1].body["messages"]] == ["hello?"]


async def test_connection_refused(tmp_path):
    with StubOpenAI() as gone:
        url = gone.base_url
    settings = make_settings(tmp_path)
    settings = Settings(model=ModelSettings(provider="openai", base_url=url, api_key_env="X",
                                            timeout=2.0), database=settings.database)
    service = Conversations.open(settings)
    try:
        thread = await service.create_thread()
        events = await collect(service.send(thread.id, "anyone?"))
        assert isinstance(events[-1], TurnFailed)
        assert events[-1].problem.kind == "connection"
        assert url in events[-1].problem.message
        assert (await service.view(thread.id)).pending
    finally:
        service.close()


async def test_a_stalled_stream_times_out(tmp_path, stub):
    service = Conversations.open(make_settings(tmp_path, stub, timeout=0.5))
    try:
        stub.push(Reply(text="a b c d e f", stall_after=2))
        thread = await service.create_thread()
        events = await collect(service.send(thread.id, "hello"))
        assert isinstance(events[-1], TurnFailed) and events[-1].problem.kind == "timeout"
        assert (await service.view(thread.id)).pending
    finally:
        service.close()


async def test_retry_without_a_pending_message_is_refused(service, stub):
    thread = await service.create_thread()
    await collect(service.send(thread.id, "hi"))
    with pytest.raises(ConversationError):
        await collect(service.retry(thread.id))


async def test_threads_list_rename_delete_search(service, stub):
    a = await service.create_thread()
    b = await service.create_thread()
    stub.state.default = Reply(text="the zebra is striped")
    await collect(service.send(a.id, "tell me about animals"))
    await collect(service.send(b.id, "and plants?"))
    listed = [t.id for t in await service.list_threads()]
    assert listed[:2] == [b.id, a.id]
    await service.rename(a.id, "  Animals   talk ")
    assert (await service.get_thread(a.id)).title == "Animals talk"
    assert [t.id for t in await service.search_threads("animals")] == [a.id]
    assert {t.id for t in await service.search_threads("zebra")} == {a.id, b.id}
    assert [t.id for t in await service.search_threads("plants")] == [b.id]
    await service.delete(a.id)
    assert [t.id for t in await service.list_threads()] == [b.id]
    assert list(service.db.saver.list({"configurable": {"thread_id": a.id}})) == []
    with pytest.raises(ConversationError):
        await service.view(a.id)


async def test_branch_keeps_the_old_branch_and_moves_the_head(service, stub):
    thread = await service.create_thread()
    stub.push(Reply(text="A1"), Reply(text="A2"), Reply(text="B2"))
    await collect(service.send(thread.id, "q1"))
    await collect(service.send(thread.id, "q2"))
    old_head = await service.head(thread.id)
    from graphs.history import History

    history = History(service)
    entries = await history.page(thread.id)
    q2 = next(e for e in entries if e.kind == "user" and e.preview == "q2")
    await collect(service.branch(thread.id, q2.checkpoint_id, "q2 edited"))
    assert texts(await service.messages(thread.id)) == [
        ("HumanMessage", "q1"), ("AIMessage", "A1"), ("HumanMessage", "q2 edited"), ("AIMessage", "B2")]
    # the old branch is still there
    assert texts(await service.messages(thread.id, old_head))[-1] == ("AIMessage", "A2")


async def test_copy_to_new_thread(service, stub):
    thread = await service.create_thread()
    await collect(service.send(thread.id, "keep me"))
    copy = await service.copy_to_new_thread(thread.id)
    assert copy.id != thread.id and copy.title.endswith("(copy)")
    assert texts(await service.messages(copy.id)) == texts(await service.messages(thread.id))
    stub.push(Reply(text="only in the copy"))
    await collect(service.send(copy.id, "more"))
    assert len(await service.messages(thread.id)) == 2


async def test_export_markdown(service, stub, tmp_path):
    thread = await service.create_thread()
    stub.push(Reply(text="```python\nprint(1)\n```"))
    await collect(service.send(thread.id, "code please"))
    out = tmp_path / "out.md"
    text = await service.export_markdown(thread.id, out)
    assert out.read_text() == text
    assert "## You\n\ncode please" in text and "```python\nprint(1)\n```" in text


async def test_offline_model_answers_without_network(tmp_path):
    service = Conversations.open(make_settings(tmp_path))
    try:
        thread = await service.create_thread()
        events = await collect(service.send(thread.id, "hello"))
        answer = events[-1].message
        assert "offline" in answer.text and "OPENAI_API_KEY" in answer.text
        assert sum(isinstance(e, Token) for e in events) > 10  # it streams
    finally:
        service.close()


async def test_database_survives_a_killed_process(tmp_path, stub):
    """SIGKILL mid-stream: the file is intact, the question is saved, the next send works."""
    import os
    import signal
    import subprocess
    import sys

    stub.push(Reply(text="slow " * 500, pace=0.01))
    db = tmp_path / "tern.db"
    script = f"""
import asyncio, sys
sys.path.insert(0, {str(os.getcwd())!r})
from graphs.config import Settings, ModelSettings
from graphs.conversations import Conversations, Token
async def main():
    s = Settings(model=ModelSettings(provider="openai", base_url={stub.base_url!r}, api_key_env="X"),
                 database=__import__("pathlib").Path({str(db)!r}))
    c = Conversations.open(s)
    t = await c.create_thread()
    n = 0
    async for e in c.send(t.id, "please survive"):
        if isinstance(e, Token):
            n += 1
            if n == 20:
                print(t.id, flush=True)
asyncio.run(main())
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    thread_id = (await asyncio.to_thread(proc.stdout.readline)).strip()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert thread_id
    assert check_integrity(db) == "ok"
    service = Conversations.open(make_settings(tmp_path, stub))
    try:
        view = await service.view(thread_id)
        assert texts(view.messages) == [("HumanMessage", "please survive")]
        assert view.pending
        stub.push(Reply(text="survived"))
        await collect(service.retry(thread_id))
        stub.push(Reply(text="and on"))
        await collect(service.send(thread_id, "next"))
        assert texts(await service.messages(thread_id))[-3:] == [
            ("AIMessage", "survived"), ("HumanMessage", "next"), ("AIMessage", "and on")]
    finally:
        service.close()


async def test_two_processes_on_one_thread_lose_nothing(tmp_path, stub):
    """A second service (as a second tern process would) waits for the first's turn."""
    stub.state.default = Reply(text="answer", pace=0.01)
    one = Conversations.open(make_settings(tmp_path, stub))
    two = Conversations.open(make_settings(tmp_path, stub))
    try:
        thread = await one.create_thread()
        await asyncio.gather(
            *(collect(svc.send(thread.id, f"{name}{i}")) for i in range(3)
              for name, svc in (("one", one), ("two", two)))
        )
        messages = await one.messages(thread.id)
        assert sorted(str(m.text) for m in messages if isinstance(m, HumanMessage)) == sorted(
            f"{n}{i}" for i in range(3) for n in ("one", "two"))
        assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage"] * 6
    finally:
        one.close()
        two.close()


async def test_busy_thread_in_another_process_is_refused_cleanly(tmp_path, stub):
    from graphs.locks import ThreadBusyError

    stub.push(Reply(text="long " * 300, pace=0.01))
    one = Conversations.open(make_settings(tmp_path, stub))
    two = Conversations.open(make_settings(tmp_path, stub), lock_wait_seconds=0.2)
    try:
        thread = await one.create_thread()
        task = asyncio.create_task(collect(one.send(thread.id, "first")))
        await asyncio.sleep(0.3)
        with pytest.raises(ThreadBusyError, match="another tern window"):
            await collect(two.send(thread.id, "second"))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        one.close()
        two.close()


async def test_cancel_landing_in_a_callback_still_closes_the_stream(tmp_path, stub):
    """The cancel lands in a token callback rather than the socket read: the
    provider's stream must close all the same."""
    from langchain_core.callbacks import AsyncCallbackHandler

    from graphs.models import make_chat_model

    class SlowCallback(AsyncCallbackHandler):
        async def on_llm_new_token(self, token, **kwargs):
            await asyncio.sleep(0.05)  # where the cancel will land

    settings = make_settings(tmp_path, stub)

    def model():
        m = make_chat_model(settings.model)
        m.callbacks = [SlowCallback()]
        return m

    service = Conversations(Conversations.open(settings).db, settings, model_factory=model)
    try:
        for run in range(3):
            stub.push(Reply(text="word " * 2000, pace=0.001))
            thread = await service.create_thread()
            seen = 0

            async def turn():
                nonlocal seen
                async with aclosing(service.send(thread.id, "go")) as events:
                    async for event in events:
                        seen += isinstance(event, Token)

            task = asyncio.create_task(turn())
            while seen < 3:
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            disconnect = await asyncio.to_thread(stub.wait_for_disconnect, run + 1, 3.0)
            assert disconnect.chunks_sent < 2000
    finally:
        service.close()
