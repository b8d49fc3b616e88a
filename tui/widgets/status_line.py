"""One line: model and endpoint, thread, source, and the last answer's cost."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from tui.sanitize import clean


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    model_label: reactive[str] = reactive("")
    thread_title: reactive[str] = reactive("")
    source: reactive[str] = reactive("")
    last_answer: reactive[str] = reactive("")
    activity: reactive[str] = reactive("")

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"● {self.model_label}", style="bold")
        for part, style in ((self.thread_title, ""), (self.source, "italic"),
                            (self.last_answer, "dim"), (self.activity, "bold")):
            if part:
                text.append("  │  ", style="dim")
                text.append(clean(part), style=style)
        return text
