"""The history panel: the current head's lineage, newest first, paged as you scroll.

It renders :class:`graphs.history.HistoryEntry` rows and posts what the user
chose; the app runs the action through the conversation service.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from tui.sanitize import clean
from tui.widgets.thread_list import ago

ICONS = {"user": "›", "answer": "‹", "cancelled": "◌", "error": "✗", "source": "▤"}
LABELS = {"user": "you", "answer": "answer", "cancelled": "cancelled", "error": "error", "source": "source"}
LOAD_MORE_WITHIN = 5  # rows from the end that trigger the next page


def relative(at: datetime | None) -> str:
    """The thread list's age ("3h"), said as a time past: "3h ago", "just now"."""
    if at is None:
        return ""
    span = ago(at.timestamp())
    return "just now" if span == "now" else f"{span} ago"


def row_text(entry) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    style = {"error": "red", "cancelled": "yellow", "user": "bold"}.get(entry.kind, "")
    text.append(f"{ICONS.get(entry.kind, '·')} ", style=style)
    text.append(f"{LABELS.get(entry.kind, entry.kind):<9}", style=style)
    text.append(f" step {entry.step:<3} {relative(entry.at):>8}", style="dim")
    if entry.branches > 1:
        text.append(f"  {entry.branches} branches", style="bold magenta")
    if entry.is_head:
        text.append("  ● head", style="bold green")
    text.append("\n  " + clean(entry.preview), style="" if entry.kind != "error" else "red")
    return text


class HistoryPanel(Vertical):
    """Docked beside the conversation; arrows move, Enter acts, Esc closes."""

    BINDINGS = [Binding("enter", "act", "Actions", show=True)]

    class Previewed(Message):
        def __init__(self, entry) -> None:
            super().__init__()
            self.entry = entry

    class ActionRequested(Message):
        def __init__(self, entry) -> None:
            super().__init__()
            self.entry = entry

    class MoreWanted(Message):
        pass

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.entries: list = []
        self.has_more = False
        self.loading = False

    def compose(self) -> ComposeResult:
        yield Label("History", id="history-title")
        yield OptionList(id="history-rows")

    def show(self, entries: list, has_more: bool, title: str) -> None:
        self.entries = list(entries)
        self.has_more = has_more
        self.query_one("#history-title", Label).update(Text(clean(title), no_wrap=True, overflow="ellipsis"))
        rows = self.query_one("#history-rows", OptionList)
        rows.clear_options()
        rows.add_options(Option(row_text(e), id=str(i)) for i, e in enumerate(self.entries))
        if self.entries:
            rows.highlighted = 0

    def append(self, entries: list, has_more: bool) -> None:
        start = len(self.entries)
        self.entries.extend(entries)
        self.has_more = has_more
        self.query_one("#history-rows", OptionList).add_options(
            Option(row_text(e), id=str(start + i)) for i, e in enumerate(entries))

    def focus_rows(self) -> None:
        self.query_one("#history-rows", OptionList).focus()

    @property
    def highlighted_entry(self):
        index = self.query_one("#history-rows", OptionList).highlighted
        return self.entries[index] if index is not None and index < len(self.entries) else None

    @on(OptionList.OptionHighlighted, "#history-rows")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.entries):
            self.post_message(self.Previewed(self.entries[index]))
        if self.has_more and not self.loading and index >= len(self.entries) - LOAD_MORE_WITHIN:
            self.loading = True
            self.post_message(self.MoreWanted())

    @on(OptionList.OptionSelected, "#history-rows")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_act()

    def action_act(self) -> None:
        if (entry := self.highlighted_entry) is not None:
            self.post_message(self.ActionRequested(entry))
