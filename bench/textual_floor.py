"""The floor for bench/app_startup.py: the least a Textual app paints.

A Static and a Footer, run the same way as tern, so the start-up bench can
show how much of tern's launch is Textual's own (importing it and painting
anything at all) on this machine at this moment.
"""

from textual.app import App, ComposeResult
from textual.widgets import Footer, Static


class Floor(App):
    BINDINGS = [("f1", "help", "Keys")]

    def compose(self) -> ComposeResult:
        yield Static("Benchmark thread 299")
        yield Footer()


if __name__ == "__main__":
    Floor().run()
