"""What the first paint waits for: only the modules the first screen shows."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs the real app headless in a fresh interpreter (this one has imported
# everything already) and lists the modules loaded when the first frame is drawn.
FIRST_FRAME_MODULES = textwrap.dedent("""
    import sys
    from pathlib import Path

    from graphs.config import ModelSettings, Settings
    from tui.app import TernApp, create_app

    loaded = []

    def first_frame_drawn(self):
        loaded.extend(sys.modules)
        self.exit()

    TernApp.first_frame_drawn = first_frame_drawn
    settings = Settings(model=ModelSettings(provider="offline"), database=Path(sys.argv[1]))
    create_app(settings).run(headless=True, size=(100, 30))
    print("\\n".join(loaded))
""")


def test_the_first_frame_waits_for_neither_langgraph_nor_dialogs(tmp_path):
    done = subprocess.run([sys.executable, "-c", FIRST_FRAME_MODULES, str(tmp_path / "tern.db")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert {"tui.app", "tui.widgets.composer", "textual.widgets._text_area"} <= loaded
    heavy = {"langgraph", "langchain_core", "langchain_openai", "openai", "httpx", "pypdf",
             "markdown_it", "tui.screens.dialogs", "graphs.conversations"}
    assert heavy & loaded == set()
