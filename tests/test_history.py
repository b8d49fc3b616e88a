"""History entries: the head's lineage as rows, branches and switching."""

from __future__ import annotations

import pytest

from graphs.config import ModelSettings, Settings
from graphs.conversations import Conversations
from graphs.history import History

from .stub_openai import Reply, StubOpenAI


@pytest.fixture
async def setup(tmp_path):
    with StubOpenAI() as stub:
        service = Conversations.open(Settings(
            model=ModelSettings(provider="openai", base_url=stub.base_url, api_key_env="X"),
            database=tmp_path / "t.db"))
        yield service, History(service), stub
        service.close()


async def talk(service, thread_id, text):
    return [e async for e in service.send(thread_id, text)]


async def test_rows_newest_first_with_kinds(setup):
    service, history, stub = setup
    thread = await service.create_thread()
    stub.push(Reply(text="A1"), Reply(status=500), Reply(text="A2"))
    await talk(service, thread.id, "q1")
    await talk(service, thread.id, "q2")
    _ = [e async for e in service.retry(thread.id)]
    rows = await history.page(thread.id)
    assert [(r.kind, r.preview) for r in rows] == [
        ("answer", "A2"), ("error", rows[1].preview), ("user", "q2"), ("answer", "A1"), ("user", "q1")]
    assert "500" in rows[1].preview or "Error" in rows[1].preview
    assert rows[0].is_head and not any(r.is_head for r in rows[1:])
    assert all(r.branches == 1 for r in rows)


async def test_branches_are_counted_and_switchable(setup):
    service, history, stub = setup
    thread = await service.create_thread()
    stub.state.default = Reply(text="ans")
    await talk(service, thread.id, "q1")
    await talk(service, thread.id, "q2")
    q2 = next(r for r in await history.page(thread.id) if r.preview == "q2")
    _ = [e async for e in service.branch(thread.id, q2.checkpoint_id, "q2b")]
    rows = await history.page(thread.id)
    edited = next(r for r in rows if r.kind == "user" and r.preview == "q2b")
    assert edited.branches == 2
    assert "q2" not in [r.preview for r in rows]  # the sibling branch is not an ancestor
    siblings = await history.siblings(thread.id, edited.checkpoint_id)
    assert sorted(s.preview for s in siblings) == ["q2", "q2b"]
    old = next(s for s in siblings if s.preview == "q2")
    await history.switch_to(thread.id, old.checkpoint_id)
    texts = [str(m.text) for m in await service.messages(thread.id)]
    assert texts == ["q1", "ans", "q2", "ans"]


async def test_paging_reaches_the_root_without_gaps(setup):
    service, history, stub = setup
    thread = await service.create_thread()
    stub.state.default = Reply(text="a")
    for i in range(12):
        await talk(service, thread.id, f"q{i}")
    rows, start = [], None
    while True:
        page = await history.read(thread.id, start, limit=5)
        rows += page.entries
        if page.next_from is None:
            break
        start = page.next_from
    users = [r.preview for r in rows if r.kind == "user"]
    assert users == [f"q{i}" for i in reversed(range(12))]
    assert len([r for r in rows if r.kind == "answer"]) == 12


async def test_cancelled_rows_and_preview_state(setup):
    import asyncio

    service, history, stub = setup
    thread = await service.create_thread()
    stub.push(Reply(text="first answer"), Reply(text="slow " * 100, pace=0.01))
    await talk(service, thread.id, "q1")
    task = asyncio.create_task(talk(service, thread.id, "q2"))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    rows = await history.page(thread.id)
    # the cancel shows as the saved partial answer, not also as an error
    assert [r.kind for r in rows] == ["cancelled", "user", "answer", "user"]
    first_answer = next(r for r in rows if r.preview == "first answer")
    preview = await service.view(thread.id, first_answer.checkpoint_id)
    assert [str(m.text) for m in preview.messages] == ["q1", "first answer"]
    assert (await service.head(thread.id)) == rows[0].checkpoint_id  # preview moved nothing
