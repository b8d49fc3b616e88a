"""The bottom line: the keys that matter now, and the command palette's key.

Textual's Footer draws each key as a widget of its own. Every one is
styled (with two component classes), measured, laid out and rendered, ~10 M
instructions apiece here (callgrind, process start to first frame): the
Footer with tern's seven keys was 63 M of the 1,263 M to the first frame,
the largest part of tern's own start-up after its imports and thread list. This bar draws the same keys from the same
source (the screen's active bindings) as one line of one widget: a click
presses the key, a disabled key is dim, the palette key sits on the right.
It redraws only when what it shows changes, where Textual's Footer
recomposed on every bindings signal, focus changes included.
"""

from __future__ import annotations

from typing import NamedTuple

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.style import Style
from textual.widget import Widget


class Key(NamedTuple):
    key: str
    display: str
    description: str
    enabled: bool


class KeyBar(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description", "key-bar--hover", "key-bar--edge"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .key-bar--key { color: $footer-key-foreground; background: $footer-key-background; text-style: bold; }
        & > .key-bar--description { color: $footer-description-foreground; background: $footer-description-background; }
        & > .key-bar--hover { background: $block-hover-background; }
        & > .key-bar--edge { color: $foreground 20%; }
    }
    """

    hovered: reactive[int | None] = reactive(None)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._shown: tuple[tuple[Key, ...], Key | None] = ((), None)

    def on_mount(self) -> None:
        self._shown = self.keys(self.screen)
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def keys(self, screen: Screen) -> tuple[tuple[Key, ...], Key | None]:
        """The keys shown, one per action as in Textual's Footer, and the palette key."""
        app = self.app
        active = screen.active_bindings

        def key(binding: Binding, enabled: bool) -> Key:
            return Key(binding.key, app.get_key_display(binding), binding.description, enabled)

        shown: dict[str, Key] = {}
        for _node, binding, enabled, _tooltip in active.values():
            if binding.show and binding.action not in shown:
                shown[binding.action] = key(binding, enabled)
        palette = None
        if app.ENABLE_COMMAND_PALETTE and (found := active.get(app.COMMAND_PALETTE_BINDING)):
            _node, binding, enabled, _tooltip = found
            palette = key(binding, enabled)
        return tuple(shown.values()), palette

    def _every_key(self) -> tuple[Key, ...]:
        """The keys in the order drawn, the palette's last: what a key_index counts."""
        keys, palette = self._shown
        return keys if palette is None else (*keys, palette)

    def _bindings_changed(self, screen: Screen) -> None:
        if screen is self.screen and (shown := self.keys(screen)) != self._shown:
            self._shown = shown
            self.refresh()

    def _key(self, index: int, key: Key) -> Content:
        key_style = self.get_visual_style("key-bar--key")
        description_style = self.get_visual_style("key-bar--description")
        part = Content.assemble((key.display, key_style), (f" {key.description}", description_style))
        if not key.enabled:
            part = part.stylize(Style(dim=True))
        if index == self.hovered:
            part = part.stylize(self.get_visual_style("key-bar--hover"))
        return part.stylize(Style.from_meta({"key_index": index}))

    def render(self) -> Content:
        keys, palette = self._shown
        left = Content(" ").join(self._key(index, key) for index, key in enumerate(keys))
        if palette is None:
            return left
        right = Content.assemble(("▏", self.get_visual_style("key-bar--edge")),
                                 self._key(len(keys), palette), " ")
        gap = self.size.width - left.cell_length - right.cell_length
        if gap < 1:  # too narrow for both: ctrl+p is on the help screen too
            return left
        return Content.assemble(left, " " * gap, right)

    def _key_at(self, index: object) -> Key | None:
        every = self._every_key()
        return every[index] if isinstance(index, int) and 0 <= index < len(every) else None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hovered = event.style.meta.get("key_index")

    def on_leave(self, _event: events.Leave) -> None:
        self.hovered = None

    def on_click(self, event: events.Click) -> None:
        key = self._key_at(event.style.meta.get("key_index"))
        if key is None:
            return
        if key.enabled:
            self.app.simulate_key(key.key)
        else:
            self.app.bell()

    @property
    def shown(self) -> dict[str, bool]:
        """Description -> enabled, for every key on the bar."""
        return {key.description: key.enabled for key in self._every_key()}
