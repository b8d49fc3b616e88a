"""Opening the history panel on a 10,000-checkpoint thread.

Builds a thread of 5,000 turns (10,000 checkpoints) through the real
conversation service, then times (a) the service's first page of rows
(History.read) and (b) the app: from ctrl+g to the first rows in the panel,
under Pilot.

    uv run python bench/history_panel.py
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from _common import summary

from graphs.config import ModelSettings, Settings
from graphs.conversations import Conversations
from graphs.history import History
from tests.seeding import fill_thread
from tui.app import StartRequest, create_app
from tui.widgets.history_panel import HistoryPanel

TURNS = 5_000


async def main() -> None:
    cached = Path(tempfile.gettempdir()) / f"tern-bench-history-{TURNS}.db"
    folder = Path(tempfile.mkdtemp(prefix="tern-history-"))
    settings = Settings(model=ModelSettings(provider="offline"), database=folder / "tern.db")
    # Building takes a while (each turn replays the thread's state), so the
    # database is kept between runs and topped up if an earlier build stopped.
    build = Settings(model=settings.model, database=cached)
    started = time.perf_counter()
    if not cached.exists():
        await fill_thread(build, TURNS, title="Long thread")
    else:
        probe = Conversations.open(build)
        thread = (await probe.list_threads(limit=1))[0]
        done = len(await probe.messages(thread.id)) // 2
        probe.close()
        if done < TURNS:
            await fill_thread(build, TURNS - done, thread_id=thread.id, start=done)
    print(f"database ready in {time.perf_counter() - started:.0f} s")
    shutil.copy(cached, settings.database)
    service = Conversations.open(settings)
    thread = (await service.list_threads(limit=1))[0]
    count = service.db.saver.conn.execute(
        "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (thread.id,)).fetchone()[0]
    history = History(service)
    service_ms = []
    for _ in range(20):
        start = time.perf_counter()
        page = await history.read(thread.id)
        service_ms.append((time.perf_counter() - start) * 1000)
    assert len(page.entries) == 50
    service.close()

    app_ms = []
    app = create_app(settings, start=StartRequest(thread_id=thread.id))
    async with app.run_test(size=(120, 40)):
        while app.current is None:
            await asyncio.sleep(0.01)
        await asyncio.sleep(1.0)  # let the thread's own opening (10,000 messages) finish
        for _ in range(10):  # the first open also mounts the panel
            start = time.perf_counter()
            await app.open_history()
            panel = app.main.query_one(HistoryPanel)
            assert panel.entries
            app_ms.append((time.perf_counter() - start) * 1000)
            panel.display = False
    shutil.rmtree(folder, ignore_errors=True)
    print(f"thread of {count:,} checkpoints")
    print("  first page (50 rows), History.read:          " + summary(service_ms))
    print("  ctrl+g -> rows in the panel (app, Pilot):    " + summary(app_ms))
    print(f"  of which the first open, mounting the panel: {app_ms[0]:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
