"""A streamed answer: its own Markdown widget fed through MarkdownStream.

In a module of its own so the first paint does not import Markdown (its
parser and highlighter cost ~50 ms); it loads with the first answer shown.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Markdown

from tui.sanitize import clean
from tui.widgets.messages import FLUSH_SECONDS, CopyRequested, code_blocks


class AssistantMessage(Markdown, can_focus=True):
    BINDINGS = [Binding("c", "copy", "Copy"), Binding("k", "copy_code", "Copy code")]

    def __init__(self, text: str = "", *, cancelled: bool = False, note: str = "") -> None:
        self.text = clean(text)
        super().__init__(self.text, classes="message assistant", open_links=False)
        self.border_title = "Assistant"
        self._pending: list[str] = []
        self._stream = None
        self._timer: Timer | None = None
        # Not mounted yet: styled once at mount (a class change now restyles at once).
        self.set_class(cancelled, "cancelled", update=False)
        self.border_subtitle = "cancelled" if cancelled else note

    def start_stream(self) -> None:
        self._stream = Markdown.get_stream(self)
        self._timer = self.set_interval(FLUSH_SECONDS, self.flush)

    def add_token(self, text: str) -> None:
        piece = clean(text)
        self.text += piece
        self._pending.append(piece)

    async def flush(self) -> None:
        if self._pending and self._stream is not None:
            chunk = "".join(self._pending)
            self._pending.clear()
            await self._stream.write(chunk)

    async def end_stream(self, *, note: str = "", cancelled: bool = False) -> None:
        if self._timer is not None:
            self._timer.stop()
        await self.flush()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.set_class(cancelled, "cancelled")
        self.border_subtitle = "cancelled" if cancelled else note

    def action_copy(self) -> None:
        self.post_message(CopyRequested(self.text, "answer"))

    def action_copy_code(self) -> None:
        blocks = code_blocks(self.text)
        if blocks:
            self.post_message(CopyRequested("\n\n".join(blocks), "code"))
        else:
            self.notify("This answer has no code block.", severity="warning")

    @on(Markdown.LinkClicked)
    def _link(self, event: Markdown.LinkClicked) -> None:
        # Links in model output are data: show where they go, open nothing.
        event.stop()
        self.notify(clean(event.href), title="Link (not opened)")
