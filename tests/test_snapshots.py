"""Snapshots of the main screens (fixed size, no cursor blink, no live timings)."""

from __future__ import annotations

import asyncio

from langchain_core.messages import HumanMessage

from graphs.conversations import Conversations
from tui.app import StartRequest, create_app
from tui.widgets.composer import Composer
from tui.widgets.status_line import StatusLine

from .stub_openai import Reply, StubOpenAI
from .test_app import ready, settings_for, wait_for

SIZE = (100, 30)


def run_before_for(condition=lambda app: True):
    async def run_before(pilot) -> None:
        await ready(pilot)
        pilot.app.query_one(Composer).cursor_blink = False
        await wait_for(pilot, lambda: condition(pilot.app))
        # the stub listens on a random port: keep it out of the picture
        status = pilot.app.query_one(StatusLine)
        status.model_label = status.model_label.split(" @ ")[0]
        await pilot.pause()

    return run_before


async def seeded_thread(tmp_path, stub, replies, sends):
    service = Conversations.open(settings_for(tmp_path, stub))
    try:
        stub.push(*replies)
        thread = await service.create_thread()
        for text in sends:
            async for _ in service.send(thread.id, text):
                pass
        return service, thread
    except BaseException:
        service.close()
        raise


def snapshot_thread(snap_compare, tmp_path, seed, run_before=None, size=SIZE) -> bool:
    """Seed a thread with ``seed(service, thread)`` over the stub, then snapshot the app on it."""
    with StubOpenAI() as stub:
        async def build():
            service, thread = await seeded_thread(tmp_path, stub, [], [])
            try:
                await seed(service, thread, stub)
            finally:
                service.close()
            return thread.id

        thread_id = asyncio.run(build())
        app = create_app(settings_for(tmp_path, stub), start=StartRequest(thread_id=thread_id))
        return snap_compare(app, terminal_size=size,
                            run_before=run_before or run_before_for(lambda a: a.current is not None))


async def send(service, thread, stub, *exchanges):
    for text, reply in exchanges:
        stub.push(reply)
        async for _ in service.send(thread.id, text):
            pass


def test_empty_first_run_on_the_offline_model(snap_compare, tmp_path):
    app = create_app(settings_for(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before_for())


def test_main_screen_with_a_conversation(snap_compare, tmp_path):
    async def seed(service, thread, stub):
        await send(service, thread, stub,
                   ("What is a tern?", Reply(text="A *tern* is a seabird.\n\n```python\nprint('fly')\n```\n")),
                   ("Any record holders?", Reply(text="Arctic terns migrate farther than any other bird.")))

    assert snapshot_thread(snap_compare, tmp_path, seed)


def test_cancelled_answer(snap_compare, tmp_path):
    async def seed(service, thread, stub):
        after = await service._append_human(thread, None, HumanMessage("Tell me a long story"))
        await service._save_cancelled(thread, after, "Once upon a time, on a windy")
        await service.rename(thread.id, "A long story")

    assert snapshot_thread(snap_compare, tmp_path, seed)


def test_error_with_retry(snap_compare, tmp_path):
    async def seed(service, thread, stub):
        await send(service, thread, stub, ("Hello?", Reply(status=429)))

    assert snapshot_thread(snap_compare, tmp_path, seed)


def test_history_panel_on_a_forked_thread(snap_compare, tmp_path):
    from graphs.history import History

    async def seed(service, thread, stub):
        await send(service, thread, stub, ("What are terns?", Reply(text="Terns are seabirds.")),
                   ("How many kinds?", Reply(text="About 40 species.")))
        rows = await History(service).page(thread.id)
        q2 = next(r for r in rows if r.preview == "How many kinds?")
        stub.push(Reply(text="The Arctic tern flies farthest."))
        async for _ in service.branch(thread.id, q2.checkpoint_id, "Which one flies farthest?"):
            pass

    async def open_panel(pilot):
        await run_before_for(lambda a: a.current is not None)(pilot)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: pilot.app.main.query_one("#history").display)
        await pilot.pause()

    assert snapshot_thread(snap_compare, tmp_path, seed, open_panel, size=(150, 30))
