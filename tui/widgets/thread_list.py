"""The sidebar: threads newest first, the current one highlighted; a search box on demand.

The search box is mounted the first time it is wanted (ctrl+f), not with the
list: a TUI's filter bar usually appears when asked for, and an Input in the
first frame cost ~21 M instructions (~5 ms) of start-up.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from graphs.storage import ThreadRow
from tui.sanitize import clean
from tui.widgets.compact import compact


def ago(timestamp: float, now: float | None = None) -> str:
    seconds = max(0, (now or time.time()) - timestamp)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


def size_text(chars: int | None) -> str:
    if not chars:
        return ""
    return f"{chars / 1000:.0f}k chars" if chars >= 1000 else f"{chars} chars"


def thread_label(row: ThreadRow, current: bool) -> Text:
    marker = "▍" if current else " "
    kind = "▤" if row.kind == "source" else "◇"
    title = clean(row.title) or "New chat"
    label = Text(f"{marker}{kind} ", no_wrap=True, overflow="ellipsis")
    label.append(title, style="bold" if current else "")
    label.append(f" · {ago(row.updated_at)}", style="dim")
    if row.kind == "source" and row.source_title:
        label.append(f"\n    {clean(row.source_title)} · {size_text(row.source_chars)}", style="dim italic")
    return label


class ThreadList(Vertical):
    BINDINGS = [Binding("escape", "close_search", "Close search", show=False)]

    class Selected(Message):
        def __init__(self, thread_id: str) -> None:
            super().__init__()
            self.thread_id = thread_id

    class SearchChanged(Message):
        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    def __init__(self, rows: list[ThreadRow] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[ThreadRow] = rows or []
        self.current: str | None = None

    def compose(self) -> ComposeResult:
        # Filled here rather than after mount, so the first frame is laid out once.
        yield OptionList(*self._options(), id="threads")

    def _options(self) -> list[Option]:
        if not self.rows and self.searching:
            return [Option(Text("No thread matches.\nesc clears the search.", style="dim"), disabled=True)]
        if not self.rows:
            return [Option(Text("No threads yet:\ntype below to start one.", style="dim"), disabled=True)]
        return [Option(thread_label(r, r.id == self.current), id=r.id) for r in self.rows]

    def set_threads(self, rows: list[ThreadRow], current: str | None) -> None:
        self.rows, self.current = rows, current
        options = self.query_one("#threads", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        options.add_options(self._options())
        index = next((i for i, r in enumerate(rows) if r.id == current), highlighted)
        if index is not None and rows:
            options.highlighted = min(index, len(rows) - 1)

    @on(OptionList.OptionSelected, "#threads")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Selected(event.option.id))

    @on(Input.Changed, "#thread-search")
    def _search(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.SearchChanged(event.value))

    @on(Input.Submitted, "#thread-search")
    def _search_done(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#threads", OptionList).focus()

    def _search_box(self) -> Input | None:
        return next(self.query("#thread-search").results(Input), None)

    @property
    def searching(self) -> bool:
        box = self._search_box()
        return box is not None and bool(box.value)

    async def open_search(self) -> None:
        """Show the search box, mounting it the first time, and focus it."""
        box = self._search_box()
        if box is None:
            box = compact(Input(placeholder="Search threads…  (esc closes)", id="thread-search"))
            await self.mount(box, before=0)
        box.display = True
        box.focus()

    def action_close_search(self) -> None:
        """Clear and hide the search box; the full list comes back."""
        box = self._search_box()
        if box is None or not box.display:
            return
        box.value = ""  # posts Input.Changed, so the app lists every thread again
        box.display = False
        self.query_one("#threads", OptionList).focus()
