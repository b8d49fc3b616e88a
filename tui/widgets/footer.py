"""Textual's Footer, composed once per burst of binding changes."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    """Textual's Footer with its keys in the first frame and coalesced recomposes.

    Textual's Footer composes empty, then queues a full recompose for every
    bindings signal. At start-up focus and binding refreshes send five, each
    rebuilding and restyling every key (~20 ms apiece here), which put the
    footer ~150 ms behind the rest of the first frame. ``refresh(recompose=True)``
    folds a burst into one recompose.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The app's bindings are known at mount; without this the footer is
        # blank in the first frame. (A private flag of Textual's Footer.)
        self._bindings_ready = True

    def bindings_changed(self, screen: Screen) -> None:
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.refresh(recompose=True)
