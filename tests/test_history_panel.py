"""The history panel under Pilot: open, page, preview, branch, switch, copy."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tui.screens.dialogs import ChoiceScreen, PromptScreen
from tui.widgets.history_panel import HistoryPanel, relative
from tui.widgets.answer import AssistantMessage
from tui.widgets.messages import UserMessage
from tui.widgets.status_line import StatusLine
from tui.widgets.thread_list import ThreadList

from .stub_openai import Reply, StubOpenAI
from .test_app import SIZE, idle, make_app, opened_on_long_thread, ready, type_and_send, wait_for


@pytest.fixture
def stub():
    with StubOpenAI() as server:
        server.state.default = Reply(text="ok")
        yield server


def test_ages_read_as_times_past():
    now = datetime.now(timezone.utc)
    assert [relative(at) for at in (None, now, now - timedelta(hours=3, minutes=5),
                                    now - timedelta(days=2))] == ["", "just now", "3h ago", "2d ago"]


async def talk(pilot, *texts):
    app = pilot.app
    for text in texts:
        await type_and_send(pilot, text)
        await wait_for(pilot, lambda: app.current is not None and idle(app)
                       and any(w.text == text for w in app.query(UserMessage)))
        await wait_for(pilot, lambda: idle(app))


async def test_thread_list_makes_way_for_the_panel_on_a_narrow_screen(tmp_path, stub):
    for width, sidebar_while_open in ((110, False), (150, True)):
        app = make_app(tmp_path / str(width), stub)
        async with app.run_test(size=(width, 36)) as pilot:
            await ready(pilot)
            await talk(pilot, "q1")
            sidebar = app.query_one(ThreadList)
            await pilot.press("ctrl+g")
            panel = app.query_one(HistoryPanel)
            await wait_for(pilot, lambda: panel.display and panel.entries)
            assert sidebar.display is sidebar_while_open
            await pilot.press("escape")
            await wait_for(pilot, lambda: not panel.display)
            assert sidebar.display


async def choose(pilot, key):
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
    app.screen.dismiss(key)
    await pilot.pause()


async def test_open_preview_and_close(tmp_path, stub):
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await talk(pilot, "q1", "q2")
        assert app.check_action("history", ()) is True
        await pilot.press("ctrl+g")
        panel = app.query_one(HistoryPanel)
        await wait_for(pilot, lambda: panel.display and panel.entries)
        assert [(e.kind, e.preview) for e in panel.entries] == [
            ("answer", "ok"), ("user", "q2"), ("answer", "ok"), ("user", "q1")]
        assert panel.entries[0].is_head
        head = await app.service.head(app.current.id)
        await pilot.press("down", "down")  # the first answer: preview the thread as it was
        await wait_for(pilot, lambda: [w.text for w in app.query(UserMessage)] == ["q1"])
        assert (await app.service.head(app.current.id)) == head  # preview moved nothing
        await pilot.press("escape")
        await wait_for(pilot, lambda: not panel.display)
        await wait_for(pilot, lambda: [w.text for w in app.query(UserMessage)] == ["q1", "q2"])


async def test_edit_branches_and_switching_back(tmp_path, stub):
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await talk(pilot, "q1", "q2")
        await pilot.press("ctrl+g")
        panel = app.query_one(HistoryPanel)
        await wait_for(pilot, lambda: panel.entries)
        await pilot.press("down")  # "q2"
        await pilot.press("enter")
        await choose(pilot, "edit")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        app.screen.query_one("#answer").value = "q2 edited"
        await pilot.press("enter")
        await wait_for(pilot, lambda: idle(app) and any(w.text == "q2 edited" for w in app.query(UserMessage)))
        await wait_for(pilot, lambda: idle(app))
        assert [w.text for w in app.query(UserMessage)] == ["q1", "q2 edited"]

        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: panel.display and panel.entries)
        edited = next(e for e in panel.entries if e.preview == "q2 edited")
        assert edited.branches == 2
        assert "q2" not in [e.preview for e in panel.entries]  # no sibling shown as an ancestor
        panel.query_one("#history-rows").highlighted = panel.entries.index(edited)
        await pilot.press("enter")
        await choose(pilot, "switch")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        old = next(key for key, label in app.screen.choices if label.endswith("q2"))
        app.screen.dismiss(old)
        await wait_for(pilot, lambda: [w.text for w in app.query(UserMessage)] == ["q1", "q2"])
        # the panel follows the switch: the old branch is the lineage now
        await wait_for(pilot, lambda: "q2" in [e.preview for e in panel.entries]
                       and "q2 edited" not in [e.preview for e in panel.entries])


async def test_copy_to_new_thread(tmp_path, stub):
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await talk(pilot, "keep", "drop")
        original = app.current.id
        await pilot.press("ctrl+g")
        panel = app.query_one(HistoryPanel)
        await wait_for(pilot, lambda: panel.entries)
        panel.query_one("#history-rows").highlighted = 2  # the answer to "keep"
        await pilot.press("enter")
        await choose(pilot, "copy")
        await wait_for(pilot, lambda: app.current.id != original)
        assert app.current.title.endswith("(copy)")
        assert [w.text for w in app.query(UserMessage)] == ["keep"]
        assert len(app.query(AssistantMessage)) == 1
        # as after Esc: the thread list is back on this narrow screen, no preview left
        assert not panel.display and app.query_one(ThreadList).display
        assert app.query_one(StatusLine).activity == ""


async def test_pages_load_as_you_scroll(tmp_path):
    async with opened_on_long_thread(tmp_path, turns=40) as (app, pilot):
        await pilot.press("ctrl+g")
        panel = app.query_one(HistoryPanel)
        await wait_for(pilot, lambda: panel.entries)
        assert len(panel.entries) == 50 and panel.has_more
        panel.query_one("#history-rows").highlighted = 48
        await wait_for(pilot, lambda: len(panel.entries) == 80)
        users = [e.preview for e in panel.entries if e.kind == "user"]
        assert users == [f"Question {i}: what about item {i}?" for i in reversed(range(40))]
