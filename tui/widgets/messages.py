"""The conversation: user messages, streamed answers, errors.

Answers stream into their own ``Markdown`` widget through ``MarkdownStream``
with tokens batched every ~60 ms (per-chunk ``Markdown.update`` manages a
few hundred chunks a minute). Only the newest messages are mounted; older
ones mount in batches as the user scrolls up, since layout cost grows with
the number of widgets.

All text passes through :func:`tui.sanitize.clean` and is rendered by
``Markdown`` or with ``markup=False`` — never as Rich/Textual markup.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from tui.sanitize import clean

if TYPE_CHECKING:  # langchain_core costs ~0.5 s to import; the first paint must not wait for it
    from langchain_core.messages import AIMessage, AnyMessage

    from tui.widgets.answer import AssistantMessage

WINDOW = 40  # messages mounted when a thread opens
BATCH = 30  # older messages mounted per scroll to the top
FLUSH_SECONDS = 0.06

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def code_blocks(text: str) -> list[str]:
    return [m.group(1).rstrip("\n") for m in _FENCE.finditer(text)]


class CopyRequested(Message):
    def __init__(self, text: str, what: str) -> None:
        super().__init__()
        self.text = text
        self.what = what


class RetryRequested(Message):
    pass


class UserMessage(Static, can_focus=True):
    BINDINGS = [Binding("c", "copy", "Copy")]

    def __init__(self, text: str) -> None:
        self.text = clean(text)
        super().__init__(self.text, markup=False, classes="message user")
        self.border_title = "You"

    def action_copy(self) -> None:
        self.post_message(CopyRequested(self.text, "message"))


class ErrorMessage(Static, can_focus=True):
    BINDINGS = [Binding("r", "retry", "Retry")]

    def __init__(self, text: str) -> None:
        text = clean(text)
        if "ctrl+r" not in text:
            text += "\nPress ctrl+r to retry."
        super().__init__(text, markup=False, classes="message error")
        self.border_title = "Error"

    def action_retry(self) -> None:
        self.post_message(RetryRequested())


def answer_note(message: AIMessage) -> str:
    parts = []
    if passages := message.response_metadata.get("tern_passages"):
        parts.append("passages " + ", ".join(str(p["passage"] + 1) for p in passages[:8])
                     + ("…" if len(passages) > 8 else ""))
    usage = getattr(message, "usage_metadata", None) or {}
    if usage.get("output_tokens"):
        parts.append(f"{usage['output_tokens']} tokens")
    return " · ".join(parts)


def widget_for(message: AnyMessage) -> Any:
    if message.type == "human":
        return UserMessage(str(message.text))
    if message.type == "ai":
        from tui.widgets.answer import AssistantMessage

        cancelled = message.response_metadata.get("finish_reason") == "cancelled"
        return AssistantMessage(str(message.text), cancelled=cancelled, note=answer_note(message))
    return None


def empty_note(text: str) -> Static:
    """What an empty conversation shows instead of messages."""
    return Static(text, markup=False, classes="empty")


class MessageView(VerticalScroll):
    """Shows one thread; mounts the newest WINDOW messages, older ones on demand."""

    def __init__(self, placeholder: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self._older: list[AnyMessage] = []
        self._placeholder = placeholder

    def compose(self):
        if self._placeholder:  # shown until the first thread opens
            yield empty_note(self._placeholder)

    def on_mount(self) -> None:
        # Stay at the newest text while answers grow, until the user scrolls up.
        self.anchor()

    @property
    def hidden_older(self) -> int:
        return len(self._older)

    async def show(self, messages: list[AnyMessage], *, error: str | None = None,
                   empty_text: str = "") -> None:
        await self.remove_children()
        self._older = list(messages[:-WINDOW]) if len(messages) > WINDOW else []
        widgets = [w for w in map(widget_for, messages[-WINDOW:]) if w is not None]
        if not messages and empty_text:
            widgets = [empty_note(empty_text)]
        if error:
            widgets.append(ErrorMessage(error))
        if widgets:
            await self.mount_all(widgets)
        self.scroll_end(animate=False, immediate=True)

    async def load_older(self) -> bool:
        if not self._older:
            return False
        batch, self._older = self._older[-BATCH:], self._older[:-BATCH]
        widgets = [w for w in map(widget_for, batch) if w is not None]
        first = self.children[0] if self.children else None
        before_height = self.virtual_size.height
        await self.mount_all(widgets, before=first) if first else await self.mount_all(widgets)
        self.call_after_refresh(self._keep_position, before_height)
        return True

    def _keep_position(self, before_height: int) -> None:
        self.scroll_to(y=self.scroll_y + self.virtual_size.height - before_height, animate=False)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 and self._older:
            self.run_worker(self.load_older(), exclusive=True, group="older")

    async def add_user(self, text: str) -> UserMessage:
        await self._clear_trailing()
        widget = UserMessage(text)
        await self.mount(widget)
        self.scroll_end(animate=False)
        return widget

    async def start_answer(self) -> AssistantMessage:
        from tui.widgets.answer import AssistantMessage

        widget = AssistantMessage()
        await self.mount(widget)
        widget.start_stream()
        self.scroll_end(animate=False)
        return widget

    async def add_error(self, text: str) -> None:
        await self.mount(ErrorMessage(text))
        self.scroll_end(animate=False)

    async def _clear_trailing(self) -> None:
        for widget in list(self.query(".empty, ErrorMessage")):
            await widget.remove()

