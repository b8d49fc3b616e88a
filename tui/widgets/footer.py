"""Textual's Footer, recomposed only when the keys it shows change."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey  # not exported; the keys Footer composes


class Footer(TextualFooter):
    """Textual's Footer with its keys in the first frame and no idle recomposes.

    Textual's Footer composes empty, then queues a full recompose for every
    bindings signal, and focus moving between widgets sends one even when the
    keys shown stay the same. At start-up that was five recomposes, each
    rebuilding and restyling every key (~20 ms apiece here), which put the
    footer ~150 ms behind the rest of the first frame. This one recomposes
    when what it shows changes, and folds a burst into one recompose.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The app's bindings are known at mount; without this the footer is
        # blank in the first frame. (A private flag of Textual's Footer.)
        self._bindings_ready = True
        self._showing: tuple = ()

    def shown_keys(self, screen: Screen) -> tuple:
        """What compose would draw: the shown bindings, enabled or not, and the palette key."""
        active = screen.active_bindings
        shown = tuple((binding.key, binding.action, binding.description, enabled, tooltip)
                      for _node, binding, enabled, tooltip in active.values() if binding.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return shown, palette[2] if palette else None, self.show_command_palette

    def compose(self) -> ComposeResult:
        self._showing = self.shown_keys(self.screen)
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                # Its compact watcher sets this class just after mount, which
                # restyles the key a second time; set now, it changes nothing.
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen) -> None:
        if not (screen.app.app_focus and self.is_attached and screen is self.screen):
            return
        if self.shown_keys(screen) != self._showing:
            self.refresh(recompose=True)
