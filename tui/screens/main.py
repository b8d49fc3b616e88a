"""The screen the app composes into: styled once at start-up, not twice."""

from __future__ import annotations

from textual import events
from textual.screen import Screen


class MainScreen(Screen):
    """Textual's default screen, minus two redundant restyles at start-up.

    Textual mounts (and so styles) every widget the app composes, then sends
    the new screen a ScreenResume that restyles them all again, though
    nothing that styles depend on has changed in between. On tern's first
    screen that second pass was ~30 M instructions of the ~1,380 M from
    process start to the first frame (callgrind). Later resumes, after a
    dialog closes, keep Textual's own choice.

    Focus goes straight to the composer: Textual's default ("*") focused the
    thread list first, and moving it on restyled both widgets.
    """

    AUTO_FOCUS = "#composer"

    def __init__(self) -> None:
        super().__init__(id="_default")  # the id Textual gives its default screen
        self._resumed = False

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen._on_screen_resume, which reads the flag.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False
