"""The Textual app under Pilot, against the stub OpenAI server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import gc
import time
from contextlib import asynccontextmanager

import pytest

from graphs.config import ModelSettings, Settings
from tui import collector
from tui.app import StartRequest, TernApp, create_app
from tui.widgets.answer import AssistantMessage
from tui.widgets.composer import Composer
from tui.widgets.key_bar import KeyBar
from tui.widgets.messages import ErrorMessage, MessageView, UserMessage
from tui.widgets.status_line import StatusLine
from tui.widgets.thread_list import ThreadList

from .seeding import fill_thread
from .stub_openai import Reply, StubOpenAI

SIZE = (110, 36)


@pytest.fixture
def stub():
    with StubOpenAI() as server:
        yield server


def settings_for(tmp_path, stub=None) -> Settings:
    if stub is None:
        model = ModelSettings(provider="offline")
    else:
        model = ModelSettings(provider="openai", name="stub-model", base_url=stub.base_url,
                              api_key_env="TERN_TEST_KEY", timeout=5.0)
    return Settings(model=model, database=tmp_path / "tern.db")


def make_app(tmp_path, stub=None, start=None) -> TernApp:
    return create_app(settings_for(tmp_path, stub), start=start)


async def ready(pilot) -> None:
    app = pilot.app
    for _ in range(500):
        if app.service_ready.is_set() and not app.query_one(StatusLine).activity.startswith("loading"):
            break
        await pilot.pause(0.01)
    await pilot.pause()


async def wait_for(pilot, condition, timeout=10.0):
    # asyncio.sleep, not pilot.pause: pause also waits for the screen to go
    # idle, which during a stream can take seconds and skews what we observe.
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def type_and_send(pilot, text):
    composer = pilot.app.query_one(Composer)
    composer.focus()
    composer.insert(text)
    await pilot.press("enter")


@asynccontextmanager
async def opened_on_long_thread(tmp_path, turns: int):
    """The offline app running on a thread of `turns` questions and answers, once it has opened."""
    thread_id = await fill_thread(settings_for(tmp_path), turns=turns)
    app = make_app(tmp_path, start=StartRequest(thread_id=thread_id))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: app.current is not None)
        yield app, pilot


def idle(app) -> bool:
    return not app.turns


async def two_threads(pilot, first_text, second_text) -> tuple[str, str]:
    """Send in the current (new) chat, start another with ctrl+n, send there; return both ids."""
    app = pilot.app
    await type_and_send(pilot, first_text)
    await wait_for(pilot, lambda: app.current is not None and idle(app))
    first = app.current.id
    await pilot.press("ctrl+n")
    assert app.current is None and not app.query(UserMessage)
    await type_and_send(pilot, second_text)
    await wait_for(pilot, lambda: app.current is not None and app.current.id != first and idle(app))
    return first, app.current.id


async def test_send_streams_an_answer_and_saves_it(tmp_path, stub):
    stub.push(Reply(text="Hello **there**.", pace=0.01))
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: app.current is not None and idle(app))
        assert [w.text for w in app.query(UserMessage)] == ["hi"]
        answer = app.query_one(AssistantMessage)
        assert answer.text == "Hello **there**."
        assert app.query_one(Composer).text == ""
        messages = await app.service.messages(app.current.id)
        assert [str(m.text) for m in messages] == ["hi", "Hello **there**."]
        assert "tokens" in app.query_one(StatusLine).last_answer


async def test_escape_cancels_keeps_the_partial_and_refocuses(tmp_path, stub):
    stub.push(Reply(text="slow " * 3000, pace=0.01))  # 30 s: still streaming whatever the machine
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.check_action("cancel", ()) is None  # greyed out while idle
        await type_and_send(pilot, "go")
        await wait_for(pilot, lambda: app.query(AssistantMessage) and len(app.query_one(AssistantMessage).text) > 20)
        assert app.check_action("cancel", ()) is True
        app.query_one(MessageView).focus()  # Esc works wherever focus is
        await pilot.pause()
        assert app.focused is app.query_one(MessageView)
        pressed = time.perf_counter()
        await pilot.press("escape")
        disconnect = await asyncio.to_thread(stub.wait_for_disconnect)
        assert disconnect.at - pressed < 1.0
        await wait_for(pilot, lambda: idle(app))
        answer = app.query_one(AssistantMessage)
        assert answer.has_class("cancelled") and answer.border_subtitle == "cancelled"
        assert app.focused is app.query_one(Composer)
        saved = (await app.service.messages(app.current.id))[-1]
        assert saved.response_metadata["finish_reason"] == "cancelled"
        assert str(saved.text) == answer.text
        assert app.check_action("cancel", ()) is None


async def test_sending_while_answering_is_refused_and_the_draft_kept(tmp_path, stub):
    stub.push(Reply(text="slow " * 3000, pace=0.01))
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "first")
        await wait_for(pilot, lambda: app.query(AssistantMessage))
        await type_and_send(pilot, "second draft")
        assert app.query_one(Composer).text == "second draft"
        assert len(app.query(UserMessage)) == 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: idle(app))


async def test_error_then_retry(tmp_path, stub):
    stub.push(Reply(status=500), Reply(text="recovered"))
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert "Retry" not in shown_keys(app)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: app.query(ErrorMessage))
        await wait_for(pilot, lambda: idle(app))
        assert "HTTP 500" in str(app.query_one(ErrorMessage).render())
        assert app.check_action("retry", ()) is True
        await wait_for(pilot, lambda: shown_keys(app).get("Retry") is True)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: idle(app) and app.query(AssistantMessage)
                       and app.query(AssistantMessage).last().text == "recovered")
        assert [str(m.text) for m in await app.service.messages(app.current.id)] == ["hello", "recovered"]


async def test_new_rename_search_delete(tmp_path, stub):
    stub.state.default = Reply(text="noted")
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        first, second = await two_threads(pilot, "about zebras", "about ferns")
        sidebar = app.query_one(ThreadList)
        assert [r.id for r in sidebar.rows] == [second, first]

        await pilot.press("f2")
        await pilot.pause()
        rename_input = app.screen.query_one("#answer")
        rename_input.value = "Fern notes"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current.title == "Fern notes")
        assert app.query_one(StatusLine).thread_title == "Fern notes"

        assert not sidebar.query("#thread-search")  # mounted when first wanted
        await pilot.press("ctrl+f")
        await pilot.press(*"zebra")
        await wait_for(pilot, lambda: [r.id for r in sidebar.rows] == [first])
        await pilot.press(*"s and more")
        await wait_for(pilot, lambda: not sidebar.rows)
        assert "No thread matches" in str(app.query_one("#threads").get_option_at_index(0).prompt)
        await pilot.press("escape")  # clears and hides the search
        await wait_for(pilot, lambda: len(sidebar.rows) == 2)
        assert not sidebar.query_one("#thread-search").display
        assert app.focused is app.query_one("#threads")
        await pilot.press("ctrl+f")
        assert app.focused is sidebar.query_one("#thread-search") and app.focused.value == ""
        await pilot.press("escape")

        await pilot.press("f8")
        await pilot.pause()
        await pilot.press("tab", "enter")  # Cancel has focus; tab to Delete
        await wait_for(pilot, lambda: app.current is None)
        await wait_for(pilot, lambda: [r.id for r in sidebar.rows] == [first])
        assert await app.service.search_threads("ferns") == []


async def test_selecting_a_thread_opens_it(tmp_path, stub):
    stub.state.default = Reply(text="reply")
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        first, _ = await two_threads(pilot, "one", "two")
        options = app.query_one("#threads")
        options.focus()
        options.highlighted = 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current.id == first)
        assert [w.text for w in app.query(UserMessage)] == ["one"]


async def test_continue_resumes_the_most_recent_thread(tmp_path, stub):
    stub.state.default = Reply(text="remembered")
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "remember me")
        await wait_for(pilot, lambda: app.current is not None and idle(app))
        thread_id = app.current.id
    again = make_app(tmp_path, stub, StartRequest(continue_last=True))
    assert [t.id for t in again.first_paint.threads] == [thread_id]  # painted before LangGraph loads
    async with again.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: again.current is not None)
        assert again.current.id == thread_id
        assert [w.text for w in again.query(UserMessage)] == ["remember me"]
        assert again.query_one(AssistantMessage).text == "remembered"


async def test_model_text_is_inert(tmp_path, stub):
    hostile = ("[@click=app.quit]x[/] [link=http://x]y[/] "
               "\x1b]52;c;aGVsbG8=\x07 \x1b[31mred\x1b[0m \x9b31m \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\")
    stub.push(Reply(text=hostile, chunk_chars=7))
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_and_send(pilot, hostile)
        await wait_for(pilot, lambda: app.current is not None and idle(app))
        answer = app.query_one(AssistantMessage)
        for widget_text in (answer.text, app.query_one(UserMessage).text):
            assert "\x1b" not in widget_text and "\x07" not in widget_text and "\x9b" not in widget_text
            assert "[@click=app.quit]x[/]" in widget_text
        await pilot.click(AssistantMessage)
        await pilot.click(UserMessage)
        await pilot.pause()
        assert app.is_running
        screen = app.export_screenshot()
        assert "\x1b" not in screen and "@click=app.quit" in screen


async def test_long_thread_mounts_only_the_newest(tmp_path):
    async with opened_on_long_thread(tmp_path, turns=60) as (app, pilot):
        view = app.query_one(MessageView)
        mounted = len(view.query(".message"))
        assert mounted <= 40 and view.hidden_older == 120 - mounted
        view.scroll_home(animate=False)
        await wait_for(pilot, lambda: view.hidden_older < 120 - mounted)


async def test_offline_first_run(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.query_one(StatusLine).model_label == "offline model"
        app.service.model().seconds_per_piece = 0
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: app.current is not None and idle(app))
        assert "offline built-in model" in app.query_one(AssistantMessage).text


async def test_theme_persists(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.theme = "nord"
        await wait_for(pilot, lambda: app.service.db.store.get_pref("theme") == "nord")
    again = make_app(tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        assert again.theme == "nord"


async def test_unknown_theme_is_reported_and_the_default_kept(tmp_path):
    app = create_app(dataclasses.replace(settings_for(tmp_path), theme="no-such-theme"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.theme == "textual-dark"
        assert any("no-such-theme" in n.message for n in app._notifications)


def shown_keys(app) -> dict[str, bool]:
    """Key bar description -> enabled."""
    return app.query_one(KeyBar).shown


async def test_key_bar_redraws_only_when_its_keys_change(tmp_path, stub):
    stub.push(Reply(text="slow " * 3000, pace=0.01))
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        bar = app.query_one(KeyBar)
        assert shown_keys(app) == {"Stop": False, "New": True, "Source": True, "Threads": True,
                                    "History": False, "Keys": True, "palette": True}
        redraws = 0
        original = bar.refresh

        def counting(*args, **kwargs):
            nonlocal redraws
            redraws += 1
            return original(*args, **kwargs)

        bar.refresh = counting
        for _ in range(5):  # bindings signals that change nothing shown
            app.screen.refresh_bindings()
        app.query_one(MessageView).focus()
        app.query_one(Composer).focus()
        await pilot.pause()
        await pilot.pause()
        assert redraws == 0
        await type_and_send(pilot, "go")  # a running turn enables Stop
        await wait_for(pilot, lambda: shown_keys(app).get("Stop") is True)
        assert redraws >= 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: idle(app) and shown_keys(app).get("Stop") is False)
        assert shown_keys(app).items() >= {("New", True), ("History", True), ("Keys", True)}


async def test_clicking_a_key_on_the_bar_presses_it(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        bar = app.query_one(KeyBar)
        line = bar.render().plain
        assert line.startswith("esc Stop ^n New") and line.rstrip().endswith("▏^p palette")
        await pilot.hover(KeyBar, offset=(line.index("^n New") + 1, 0))
        assert bar.hovered == 1  # the second key
        await pilot.click(KeyBar, offset=(line.index("f1 Keys") + 3, 0))
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TextScreen")
        assert app.screen.title_text == "Keys"


async def test_the_first_screen_styles_each_widget_once(tmp_path, monkeypatch):
    """No restyle between mount and the first frame (ScreenResume, compact=True before mount)."""
    from textual.css.stylesheet import Stylesheet
    from textual.widget import Widget

    applied: collections.Counter[Widget] = collections.Counter()
    at_first_frame: dict[Widget, int] = {}
    apply, first_frame_drawn = Stylesheet.apply, TernApp.first_frame_drawn

    def counting_apply(self, node, **kwargs):
        if isinstance(node, Widget):
            applied[node] += 1
        return apply(self, node, **kwargs)

    def first_frame(self):
        at_first_frame.update(applied)
        first_frame_drawn(self)

    monkeypatch.setattr(Stylesheet, "apply", counting_apply)
    monkeypatch.setattr(TernApp, "first_frame_drawn", first_frame)
    async with make_app(tmp_path).run_test(size=SIZE) as pilot:
        await ready(pilot)
        unchanged = [pilot.app.query_one(KeyBar), *pilot.app.query_one(ThreadList).query("*"),
                     pilot.app.query_one(StatusLine)]
        assert [(type(w).__name__, at_first_frame[w]) for w in unchanged] == [
            (type(w).__name__, 1) for w in unchanged]
        # focus is a real change of style: the composer is restyled for it
        assert at_first_frame[pilot.app.query_one(Composer)] == 2


async def test_the_collector_policy_of_tern(tmp_path, monkeypatch):
    """Held off until the first frame; what start-up and loading built is frozen out of collections."""
    frozen_after: list[int] = []
    settle = collector.settle

    def recording_settle() -> None:
        settle()
        frozen_after.append(gc.get_freeze_count())

    monkeypatch.setattr(collector, "settle", recording_settle)
    app = make_app(tmp_path)
    collector.hold_for_startup()
    try:
        assert not gc.isenabled()
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            assert gc.isenabled()
            assert gc.get_threshold() == collector.THRESHOLDS
            # after the first frame, then after LangGraph and the model client loaded
            assert len(frozen_after) == 2 and 0 < frozen_after[0] < frozen_after[1]
    finally:
        collector.release()
    assert gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


async def test_an_app_outside_tern_keeps_the_default_collector(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


async def test_palette_lists_every_action(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"New chat", "New source chat", "Search threads", "Toggle thread list",
                "Copy last answer", "Keys"} <= titles


async def test_help_lists_keys(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        from textual.widgets import Markdown

        text = app.screen.query_one(Markdown).source
        for key in ("escape", "ctrl+r", "ctrl+n", "ctrl+g", "f2", "f8"):
            assert f"`{key}" in text


async def test_copy_uses_the_clipboard(tmp_path, stub):
    stub.push(Reply(text="Here:\n\n```python\nprint(42)\n```\n"))
    app = make_app(tmp_path, stub)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "code")
        await wait_for(pilot, lambda: app.current is not None and idle(app))
        app.query_one(AssistantMessage).focus()
        await pilot.press("k")
        assert app.clipboard == "print(42)"
        await pilot.press("c")
        assert app.clipboard.startswith("Here:")
