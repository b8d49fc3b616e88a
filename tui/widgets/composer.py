"""The composer: a multi-line TextArea where Enter sends.

Enter is handled in the widget's own ``_on_key``, not with a priority
binding: a priority Enter binding on a TextArea lost typed characters when
keys arrived in a burst (6 of 10 runs in tmux). A newline is ctrl+j (what
most terminals send for shift+enter or ctrl+enter) or alt+enter.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from tui.widgets.compact import compact

NEWLINE_KEYS = ("ctrl+j", "alt+enter", "shift+enter", "ctrl+enter")


class Composer(TextArea):
    DEFAULT_CSS = """
    Composer {
        height: auto;
        min-height: 3;
        max-height: 12;
    }
    """

    class Submitted(Message):
        def __init__(self, composer: Composer, text: str) -> None:
            super().__init__()
            self.composer = composer
            self.text = text

    def __init__(self, **kwargs) -> None:
        super().__init__(
            soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
            placeholder="Message  (Enter sends, ctrl+j new line)", **kwargs,
        )
        compact(self)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            if self.text.strip():
                self.post_message(self.Submitted(self, self.text))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self._replace_via_keyboard("\n", start, end)
            return
        await super()._on_key(event)
