"""The Textual app: renders threads and turns, routes keys to the conversation service.

It paints the first screen from tern's own table (see :mod:`tui.snapshot`),
then loads LangGraph and the model client on a worker thread; dialogs and
other modules the first screen does not show are imported where first used.
It holds no turn logic: :class:`graphs.conversations.Conversations` owns
turns, locks and cancellation; a turn here is one worker that renders what
``send`` yields, and Esc cancels that worker.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterable
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from graphs.config import Settings
from graphs.endpoint import model_info
from graphs.storage import ThreadRow
from tui import collector
from tui.sanitize import clean
from tui.screens.main import MainScreen
from tui.snapshot import FirstPaint, read_first_paint
from tui.widgets.composer import Composer
from tui.widgets.history_panel import HistoryPanel
from tui.widgets.key_bar import KeyBar
from tui.widgets.messages import CopyRequested, MessageView, RetryRequested, answer_note
from tui.widgets.status_line import StatusLine
from tui.widgets.thread_list import ThreadList, size_text

if TYPE_CHECKING:
    from graphs.conversations import Conversations
    from tui.widgets.answer import AssistantMessage

ServiceFactory = Callable[[Settings], "Conversations"]

EMPTY_CHAT = (
    "Type a message below and press Enter.\n\n"
    "ctrl+o chats about a file or web page · ctrl+b threads · ctrl+f search · "
    "ctrl+p every command · f1 keys"
)

#: (keys, what) for the help screen and the README's key table.
KEYS: list[tuple[str, str]] = [
    ("enter", "send the message"),
    ("ctrl+j / alt+enter", "new line in the message"),
    ("escape", "stop the answer being written (keeps what arrived); close the history panel"),
    ("ctrl+r", "retry after an error"),
    ("ctrl+n", "new chat"),
    ("ctrl+o", "new source chat: attach a file or URL"),
    ("ctrl+b", "show or hide the thread list"),
    ("ctrl+f", "search threads by title and text (esc clears the search)"),
    ("f2", "rename the thread"),
    ("f8", "delete the thread (asks first)"),
    ("ctrl+g", "history panel: browse and branch"),
    ("ctrl+t", "view the attached source's text"),
    ("ctrl+s", "export the conversation to Markdown"),
    ("c / k", "on a focused message: copy it / copy its code blocks"),
    ("tab / shift+tab", "move focus between list, messages and composer"),
    ("ctrl+p", "command palette: every action"),
    ("f1", "this help"),
    ("ctrl+q", "quit"),
]


#: Columns for the thread list (34), the conversation and the history panel
#: (48) side by side; narrower, the thread list makes way for the panel.
SIDE_BY_SIDE_WIDTH = 130


@dataclass(frozen=True)
class StartRequest:
    continue_last: bool = False
    thread_id: str | None = None
    source: str | None = None


def default_service_factory(settings: Settings) -> Conversations:
    from graphs.conversations import Conversations  # LangGraph: loaded after the first paint

    return Conversations.open(settings)


def warm_up(service: Conversations) -> None:
    """Do on the loader thread what would otherwise stall the first answer.

    Building the model imports langchain_openai (~1 s); the first Markdown
    render imports markdown-it and the highlighter. On the event loop either
    would freeze the screen just as the user sends their first message.
    """
    service.model()


class TernApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "tern"
    BINDINGS = [
        Binding("escape", "cancel", "Stop", priority=True),
        Binding("ctrl+r", "retry", "Retry"),
        Binding("ctrl+n", "new_chat", "New"),
        Binding("ctrl+o", "new_source_chat", "Source"),
        Binding("ctrl+b", "toggle_threads", "Threads"),
        Binding("ctrl+f", "search", "Search", show=False),
        Binding("f2", "rename", "Rename", show=False),
        Binding("f8", "delete", "Delete", show=False),
        Binding("ctrl+g", "history", "History"),
        Binding("ctrl+t", "view_source", "Source text", show=False),
        Binding("ctrl+s", "export", "Export", show=False),
        Binding("f1", "help", "Keys"),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        first_paint: FirstPaint | None = None,
        start: StartRequest | None = None,
        service_factory: ServiceFactory | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.first_paint = first_paint or FirstPaint()
        self.start = start or StartRequest()
        self.service_factory = service_factory or default_service_factory
        self.service: Conversations | None = None
        self.service_ready = asyncio.Event()
        self.current: ThreadRow | None = None
        self.turns: dict[str, Worker] = {}
        self.pending_retry = False
        self.search_query = ""
        self._history = None
        self._history_next: str | None = None
        self._previewing = False  # the view shows an older point than the head
        self._sidebar_made_way = False  # hidden while the history panel is open
        # Set before the first styling: from on_mount it would restyle every widget.
        wanted = self.first_paint.theme or self.settings.theme
        self.unknown_theme = None if wanted in self.available_themes else wanted
        if not self.unknown_theme:
            self.theme = wanted

    # ------------------------------------------------------------------ layout

    def get_default_screen(self) -> Screen:
        return MainScreen()

    @property
    def main(self) -> Screen:
        """The main screen, even while a dialog is on top (App.query_one asks the top one)."""
        return self.screen_stack[0]

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield ThreadList(self.first_paint.threads, id="sidebar")
            with Vertical(id="conversation"):
                yield MessageView(EMPTY_CHAT, id="messages")
                yield Composer(id="composer")
        status = StatusLine(id="status")
        status.model_label = model_info(self.settings.model).label
        status.activity = "loading…"
        yield status
        yield KeyBar()

    def on_mount(self) -> None:
        if self.unknown_theme:
            self.notify(f"Unknown theme {self.unknown_theme!r} in [ui] theme; using {self.theme}.",
                        severity="warning")
        self.call_after_refresh(self.first_frame_drawn)  # MainScreen focuses the composer

    # ---------------------------------------------------------------- loading

    def first_frame_drawn(self) -> None:
        collector.settle()
        self._load_service()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_service(self) -> None:
        try:
            service = self.service_factory(self.settings)
        except Exception as exc:  # noqa: BLE001 - shown to the user, nothing lost
            self.call_from_thread(self._service_failed, exc)
            return
        try:
            warm_up(service)
        except Exception:  # noqa: BLE001 - only a speed-up; the turn will report real errors
            pass
        self.call_from_thread(self._service_loaded, service)

    def _service_failed(self, exc: Exception) -> None:
        from tui.screens.dialogs import TextScreen

        self.main.query_one(StatusLine).activity = "database unavailable"
        self.push_screen(TextScreen("tern cannot open its database", f"{exc}\n\nPress Esc, then ctrl+q to quit."))

    async def _service_loaded(self, service: Conversations) -> None:
        self.service = service
        collector.settle()  # LangGraph and the model client live as long as the app
        self.service_ready.set()
        self.main.query_one(StatusLine).activity = ""
        if self.first_paint.theme != self.theme:
            self._save_theme(self.theme)
        if self.start.source:
            self.start_source_chat(self.start.source)
        elif self.start.thread_id:
            await self.open_thread(self.start.thread_id)
        elif self.start.continue_last:
            threads = await service.list_threads(limit=1)
            if threads:
                await self.open_thread(threads[0].id)
            else:
                self.notify("No conversation to continue yet: this is a new one.")
        await self.refresh_threads()

    def on_unmount(self) -> None:
        if self.service is not None:
            self.service.close()

    # --------------------------------------------------------------- threads

    async def refresh_threads(self) -> None:
        if self.service is None:
            return
        if self.search_query.strip():
            rows = await self.service.search_threads(self.search_query)
        else:
            rows = await self.service.list_threads()
        self.main.query_one(ThreadList).set_threads(rows, self.current.id if self.current else None)

    async def open_thread(self, thread_id: str, *, focus_composer: bool = True) -> None:
        from graphs.conversations import ConversationError

        assert self.service is not None
        try:
            view = await self.service.view(thread_id)
        except ConversationError as exc:
            self.notify(str(exc), severity="error")
            return
        self.current = view.thread
        error = None
        if view.pending and thread_id not in self.turns:
            error = ("The last answer did not arrive. "
                     + (clean(view.error) if view.error else "tern stopped before it finished."))
        self.pending_retry = error is not None
        await self.main.query_one(MessageView).show(view.messages, error=error, empty_text=EMPTY_CHAT)
        self._update_status()
        self.main.query_one(ThreadList).set_threads(self.main.query_one(ThreadList).rows, thread_id)
        self.refresh_bindings()
        if focus_composer:
            self.main.query_one(Composer).focus()

    def _update_status(self, last_answer: str | None = None) -> None:
        status = self.main.query_one(StatusLine)
        thread = self.current
        status.thread_title = (thread.title or "New chat") if thread else "New chat"
        if thread and thread.kind == "source":
            status.source = f"▤ {thread.source_title} · {size_text(thread.source_chars)}"
        else:
            status.source = ""
        if last_answer is not None:
            status.last_answer = last_answer

    @on(ThreadList.Selected)
    async def _thread_selected(self, event: ThreadList.Selected) -> None:
        if self.service is not None:
            await self.open_thread(event.thread_id)

    @on(ThreadList.SearchChanged)
    async def _search_changed(self, event: ThreadList.SearchChanged) -> None:
        self.search_query = event.query
        await self.refresh_threads()

    # ------------------------------------------------------------------ turns

    def turn_running(self) -> bool:
        return bool(self.current and self.current.id in self.turns)

    @on(Composer.Submitted)
    async def _submitted(self, event: Composer.Submitted) -> None:
        if self.turn_running():
            self.notify("Still answering: wait for it, or press Esc to stop it. Your draft is kept.",
                        severity="warning")
            return
        event.composer.clear()
        if self._history_open():
            # A preview is read-only: the message goes to the head, so show the head.
            await self.close_history()
        self.run_turn("send", event.text)

    def run_turn(self, kind: str, text: str = "", checkpoint_id: str | None = None) -> Worker:
        thread_id = self.current.id if self.current else None
        worker = self.run_worker(self._turn(kind, thread_id, text, checkpoint_id),
                                 group="turn", exit_on_error=False)
        if thread_id:
            self.turns[thread_id] = worker
        self.refresh_bindings()
        return worker

    async def _turn(self, kind: str, thread_id: str | None, text: str, checkpoint_id: str | None) -> None:
        from graphs.conversations import ConversationError, Token, TurnFailed, TurnFinished, TurnStarted
        from graphs.locks import ThreadBusyError

        view = self.main.query_one(MessageView)
        if kind == "send":
            await view.add_user(text)
        if not self.service_ready.is_set():
            self.main.query_one(StatusLine).activity = "loading…"
            await self.service_ready.wait()
        service = self.service
        assert service is not None
        worker = get_current_worker()
        if thread_id is None:  # a new chat becomes a thread with its first message
            thread = await service.create_thread()
            thread_id = thread.id
            self.current = thread
            self.turns[thread_id] = worker
            self.refresh_bindings()
        answer: AssistantMessage | None = None
        self.pending_retry = False
        self.main.query_one(StatusLine).activity = "answering…  (esc stops)"
        if kind == "send":
            events = service.send(thread_id, text)
        elif kind == "retry":
            events = service.retry(thread_id)
        else:
            assert checkpoint_id is not None
            events = service.branch(thread_id, checkpoint_id, text or None)
        showing = lambda: self.current is not None and self.current.id == thread_id  # noqa: E731
        try:
            # aclosing: Esc may land while this loop is rendering rather than
            # waiting on the service; closing the turn is what stops the model.
            async with aclosing(events):
                async for event in events:
                    if isinstance(event, TurnStarted):
                        if kind == "branch" and showing():
                            await self.open_thread(thread_id, focus_composer=False)  # the new branch
                        if showing():
                            answer = await view.start_answer()
                        self.current = await service.get_thread(thread_id) if showing() else self.current
                        self._update_status()
                        await self.refresh_threads()
                    elif isinstance(event, Token):
                        if answer is not None and answer.is_attached:
                            answer.add_token(event.text)
                    elif isinstance(event, TurnFinished):
                        if answer is not None and answer.is_attached:
                            await answer.end_stream(note=answer_note(event.message))
                        tokens = f"{event.output_tokens} tokens, " if event.output_tokens else ""
                        if showing():
                            self._update_status(f"last answer: {tokens}{event.seconds:.1f} s")
                    elif isinstance(event, TurnFailed):
                        if answer is not None and answer.is_attached:
                            await answer.end_stream()
                            if not answer.text:
                                await answer.remove()
                        if showing():
                            await view.add_error(str(event.problem))
                            self.pending_retry = True
        except asyncio.CancelledError:
            if answer is not None and answer.is_attached:
                await answer.end_stream(cancelled=True)
            raise
        except (ThreadBusyError, ConversationError) as exc:
            if answer is not None and answer.is_attached:
                await answer.remove()
            self.notify(str(exc), severity="error", timeout=8)
            if kind == "send" and showing():
                # the message was not taken: give the draft back
                composer = self.main.query_one(Composer)
                if not composer.text.strip():
                    composer.text = text
                await self.open_thread(thread_id)
        finally:
            if self.turns.get(thread_id) is worker:
                self.turns.pop(thread_id, None)
            if not self.turns:
                self.main.query_one(StatusLine).activity = ""
            self.refresh_bindings()
            if self.is_running:
                await self.refresh_threads()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "turn" and event.state == WorkerState.ERROR:
            self.notify(f"Something went wrong: {event.worker.error}. Your message is saved; "
                        "ctrl+r retries.", severity="error", timeout=10)

    # ---------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return True if (self.turn_running() or self._history_open()) else None
        if action == "retry":  # in the footer only when there is something to retry
            return self.pending_retry and not self.turn_running()
        if action in ("rename", "delete", "export", "history"):
            return True if self.current is not None else None
        if action == "view_source":
            return True if (self.current is not None and self.current.kind == "source") else None
        return True

    def _history_open(self) -> bool:
        panels = self.main.query(HistoryPanel)
        return bool(panels) and bool(panels.first().display)

    async def action_cancel(self) -> None:
        if self.current and (worker := self.turns.get(self.current.id)):
            worker.cancel()
            self.main.query_one(Composer).focus()
            self.notify("Stopped. The part already written is kept.", timeout=3)
        elif self._history_open():
            await self.close_history()

    def action_retry(self) -> None:
        if self.pending_retry and self.current and not self.turn_running():
            self.run_turn("retry")

    @on(RetryRequested)
    def _retry_requested(self) -> None:
        self.action_retry()

    async def action_new_chat(self) -> None:
        self.current = None
        self.pending_retry = False
        await self.main.query_one(MessageView).show([], empty_text=EMPTY_CHAT)
        self._update_status("")
        await self.refresh_threads()
        self.refresh_bindings()
        self.main.query_one(Composer).focus()

    def action_toggle_threads(self) -> None:
        sidebar = self.main.query_one(ThreadList)
        sidebar.display = not sidebar.display
        self._sidebar_made_way = False  # the user's choice now, kept when the panel closes
        if not sidebar.display:
            self.main.query_one(Composer).focus()

    async def action_search(self) -> None:
        sidebar = self.main.query_one(ThreadList)
        sidebar.display = True
        await sidebar.open_search()

    @work(group="dialog")
    async def action_rename(self) -> None:
        from tui.screens.dialogs import PromptScreen

        if self.current is None or self.service is None:
            return
        title = await self.push_screen_wait(PromptScreen("Rename this thread:", self.current.title))
        if title is None:
            return
        from graphs.conversations import ConversationError

        try:
            self.current = await self.service.rename(self.current.id, title)
        except ConversationError as exc:
            self.notify(str(exc), severity="error")
            return
        self._update_status()
        await self.refresh_threads()

    @work(group="dialog")
    async def action_delete(self) -> None:
        from tui.screens.dialogs import ConfirmScreen

        if self.current is None or self.service is None:
            return
        thread = self.current
        if not await self.push_screen_wait(ConfirmScreen(
                f"Delete “{clean(thread.title) or 'New chat'}” and its whole history? This cannot be undone.")):
            return
        if worker := self.turns.get(thread.id):
            worker.cancel()
        await self.service.delete(thread.id)
        self.notify(f"Deleted “{clean(thread.title) or 'New chat'}”.")
        await self.action_new_chat()

    @work(group="dialog")
    async def action_export(self) -> None:
        from tui.screens.dialogs import PromptScreen

        if self.current is None or self.service is None:
            return
        default = Path.cwd() / (_file_name(self.current.title) + ".md")
        path = await self.push_screen_wait(PromptScreen("Export this branch to Markdown at:", str(default)))
        if not path:
            return
        try:
            await self.service.export_markdown(self.current.id, path)
        except OSError as exc:
            self.notify(f"Could not write {path}: {exc.strerror or exc}", severity="error")
            return
        self.notify(f"Exported to {path}")

    @work(group="dialog")
    async def action_view_source(self) -> None:
        from tui.screens.dialogs import TextScreen

        if self.current is None or self.service is None or not self.current.source_id:
            return
        source = await self.service.get_source(self.current.source_id)
        if source is None:
            self.notify("The source text is missing from the database.", severity="error")
            return
        await self.push_screen_wait(TextScreen(f"{source.title} — {source.origin}", source.text))

    @work(group="dialog")
    async def action_new_source_chat(self) -> None:
        from tui.screens.dialogs import PromptScreen
        from tui.widgets.path_suggester import PathSuggester

        problem, value = "", ""
        while True:
            spec = await self.push_screen_wait(PromptScreen(
                "Chat about a file or web page (path or http(s) URL):", value,
                placeholder="~/notes.md or https://…", suggester=PathSuggester(), problem=problem))
            if not spec:
                return
            problem = await self._attach(spec)
            if not problem:
                return
            value = spec

    def start_source_chat(self, spec: str) -> None:
        async def attach() -> None:
            from tui.screens.dialogs import TextScreen

            if problem := await self._attach(spec):
                self.push_screen(TextScreen("Could not attach the source", problem))

        self.run_worker(attach(), group="dialog")

    async def _attach(self, spec: str) -> str:
        """Attach and open a source chat; returns a problem to show, or ''."""
        from graphs.sources import SourceError

        await self.service_ready.wait()
        assert self.service is not None
        status = self.main.query_one(StatusLine)
        status.activity = f"loading {spec}…"
        try:
            thread = await self.service.new_source_chat(spec)
        except SourceError as exc:
            return str(exc)
        finally:
            status.activity = ""
        await self.refresh_threads()
        await self.open_thread(thread.id)
        self.notify(f"Attached {thread.source_title} ({size_text(thread.source_chars)}). Ask away.")
        return ""

    def action_help(self) -> None:
        from tui.screens.dialogs import TextScreen

        table = "| key | what it does |\n| --- | --- |\n" + "\n".join(
            f"| `{keys}` | {what} |" for keys, what in KEYS)
        self.push_screen(TextScreen("Keys", table, markdown=True))

    # ---------------------------------------------------------------- history

    def history(self):
        from graphs.history import History

        assert self.service is not None
        if self._history is None:
            self._history = History(self.service)
        return self._history

    async def action_history(self) -> None:
        if self._history_open():
            await self.close_history()
        else:
            await self.open_history()

    async def open_history(self) -> None:
        if self.current is None or self.service is None:
            self.notify("Start or open a conversation first.", severity="warning")
            return
        if not self.main.query(HistoryPanel):
            # Mounted on first use: composed with the screen, it cost ~12 ms of the first frame.
            await self.main.query_one("#main", Horizontal).mount(HistoryPanel(id="history"))
        panel = self.main.query_one(HistoryPanel)
        page = await self.history().read(self.current.id)
        self._history_next = page.next_from
        sidebar = self.main.query_one(ThreadList)
        if self.main.size.width < SIDE_BY_SIDE_WIDTH and sidebar.display and not panel.display:
            sidebar.display = False  # makes way for the panel; back when it closes
            self._sidebar_made_way = True
        panel.display = True
        panel.show(page.entries, page.next_from is not None, f"History · {self.current.title or 'New chat'}")
        panel.focus_rows()
        self.refresh_bindings()

    def _hide_history(self) -> None:
        """Hide the panel and undo what opening it and previewing changed around it."""
        self.main.query_one(HistoryPanel).display = False
        if self._sidebar_made_way:
            self.main.query_one(ThreadList).display = True
            self._sidebar_made_way = False
        self._previewing = False
        self.main.query_one(StatusLine).activity = ""
        self.refresh_bindings()

    async def close_history(self) -> None:
        """Back to the current thread's head, as it was before the panel opened."""
        self._hide_history()
        if self.current is not None:
            await self.open_thread(self.current.id)
        self.main.query_one(Composer).focus()

    async def reload_history(self) -> None:
        if self._history_open():
            await self.open_history()

    @on(HistoryPanel.MoreWanted)
    async def _more_history(self) -> None:
        panel = self.main.query_one(HistoryPanel)
        if self.current is None or not self._history_next:
            panel.loading = False
            return
        page = await self.history().read(self.current.id, self._history_next)
        self._history_next = page.next_from
        panel.append(page.entries, page.next_from is not None)
        panel.loading = False

    @on(HistoryPanel.Previewed)
    def _preview(self, event: HistoryPanel.Previewed) -> None:
        # A worker, exclusive: holding an arrow key previews only where it stops.
        # A callable, not a coroutine: a preview superseded before it starts is
        # then never created (no "never awaited" coroutine left behind).
        self.run_worker(partial(self._show_preview, event.entry), group="preview", exclusive=True,
                        exit_on_error=False)

    async def _show_preview(self, entry) -> None:
        if self.current is None or self.service is None or self.turn_running():
            return
        if entry.is_head and not self._previewing:
            return  # the head is what the conversation view already shows
        self._previewing = not entry.is_head
        view = await self.service.view(self.current.id, entry.checkpoint_id)
        error = entry.preview if entry.kind == "error" else None
        await self.main.query_one(MessageView).show(view.messages, error=error)
        self.main.query_one(StatusLine).activity = (
            "" if entry.is_head else f"previewing step {entry.step} · enter: actions · esc: back")

    @on(HistoryPanel.ActionRequested)
    def _history_action(self, event: HistoryPanel.ActionRequested) -> None:
        self.run_worker(self._act_on(event.entry), group="dialog")

    async def _act_on(self, entry) -> None:
        from tui.screens.dialogs import ChoiceScreen, PromptScreen

        assert self.service is not None and self.current is not None
        thread_id = self.current.id
        choices = []
        if entry.kind == "user":
            choices += [("edit", "Edit this message and branch from here"),
                        ("reask", "Ask this again (a new branch)")]
        if not entry.is_head:
            choices.append(("checkout", "Continue the conversation from here"))
        if entry.branches > 1:
            choices.append(("switch", f"Switch to another branch here ({entry.branches})"))
        choices.append(("copy", "Copy up to here into a new thread"))
        choice = await self.push_screen_wait(ChoiceScreen(f"Step {entry.step}: {entry.preview}", choices))
        if choice is None:
            return
        if self.turn_running():
            self.notify("Still answering: wait for it, or press Esc to stop it.", severity="warning")
            return
        from graphs.conversations import ConversationError

        try:
            if choice in ("edit", "reask"):
                text = None
                if choice == "edit":
                    messages = await self.service.messages(thread_id, entry.checkpoint_id)
                    text = await self.push_screen_wait(PromptScreen(
                        "Edit the message (the old branch stays in the history):", str(messages[-1].text),
                        select_all=False))
                    if not text:
                        return
                await self.close_history()
                self.run_turn("branch", text or "", entry.checkpoint_id)
            elif choice == "checkout":
                await self.service.checkout(thread_id, entry.checkpoint_id)
                await self.close_history()
                self.notify("The next message continues from that point; the later part stays in history.")
            elif choice == "switch":
                siblings = await self.history().siblings(thread_id, entry.checkpoint_id)
                picked = await self.push_screen_wait(ChoiceScreen(
                    "Switch to which branch?",
                    [(s.checkpoint_id, f"{'● ' if s.checkpoint_id == entry.checkpoint_id else '  '}"
                      f"{s.kind}: {s.preview}") for s in siblings]))
                if picked:
                    await self.history().switch_to(thread_id, picked)
                    await self.open_thread(thread_id, focus_composer=False)
                    await self.reload_history()
            elif choice == "copy":
                thread = await self.service.copy_to_new_thread(thread_id, entry.checkpoint_id)
                self._hide_history()
                await self.refresh_threads()
                await self.open_thread(thread.id)
                self.notify(f"Copied into “{clean(thread.title)}”.")
        except ConversationError as exc:
            self.notify(str(exc), severity="error")

    @on(CopyRequested)
    def _copy(self, event: CopyRequested) -> None:
        self.copy_to_clipboard(event.text)
        self.notify(f"Copied the {event.what} ({len(event.text)} characters).", timeout=3)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        commands = [
            ("New chat", "Start a new conversation", self.action_new_chat, True),
            ("New source chat", "Chat about a file or a web page", self.action_new_source_chat, True),
            ("Stop the answer", "Cancel the generation in flight (Esc)", self.action_cancel,
             self.turn_running()),
            ("Retry", "Ask the model again after an error", self.action_retry, self.pending_retry),
            ("Rename thread", "Give this conversation a title", self.action_rename, self.current is not None),
            ("Delete thread", "Delete this conversation", self.action_delete, self.current is not None),
            ("Search threads", "Find threads by title or message text", self.action_search, True),
            ("Toggle thread list", "Show or hide the sidebar", self.action_toggle_threads, True),
            ("History", "Browse this thread's history and branch", self.action_history,
             self.current is not None),
            ("View source text", "Read the attached source", self.action_view_source,
             self.current is not None and self.current.kind == "source"),
            ("Export to Markdown", "Save this branch as a Markdown file", self.action_export,
             self.current is not None),
            ("Copy last answer", "Copy the newest answer to the clipboard", self.action_copy_last, True),
            ("Keys", "Every key tern understands", self.action_help, True),
        ]
        for title, help_text, callback, enabled in commands:
            if enabled:
                yield SystemCommand(title, help_text, callback)

    def action_copy_last(self) -> None:
        answers = list(self.main.query(".message.assistant"))
        if not answers:
            self.notify("No answer to copy yet.", severity="warning")
            return
        answers[-1].action_copy()

    # ------------------------------------------------------------------ theme

    def watch_theme(self, theme: str) -> None:
        if self.service is not None:
            self._save_theme(theme)

    def _save_theme(self, theme: str) -> None:
        service = self.service
        if service is not None:
            self.run_worker(asyncio.to_thread(service.db.store.set_pref, "theme", theme), group="prefs")


def _file_name(title: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in " -_" else " " for c in title).strip()
    return "-".join(cleaned.split())[:60] or "conversation"


def create_app(
    settings: Settings,
    *,
    start: StartRequest | None = None,
    service_factory: ServiceFactory | None = None,
) -> TernApp:
    """The one way to build the app, shared by the CLI and the tests."""
    # The first frame lists only the threads a screen can show; each one in
    # the OptionList is laid out up front. The full list follows the service.
    screenful = shutil.get_terminal_size().lines
    return TernApp(settings, first_paint=read_first_paint(settings.database, limit=screenful),
                   start=start, service_factory=service_factory)
