"""The app under Pilot against the stub server: streaming speed and Esc latency.

- Streaming: the stub sends 1,000 tokens at 500 tokens/s; we report how long
  after the server's last token the full answer is on screen (the Markdown
  stream flushed and closed), and how long a key typed mid-stream takes to
  reach the composer.
- Esc: from pressing Esc (key dispatch included) to the server seeing the
  HTTP stream close, 20 runs.

Each app runs under tern's garbage-collector policy (tui.collector), as the
`tern` command sets it; `--python-gc` keeps Python's defaults to compare.

    uv run python bench/app_pilot.py [--python-gc]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import tempfile
import time
from pathlib import Path

from textual import events

from _common import summary

from graphs.config import ModelSettings, Settings
from tests.stub_openai import Reply, StubOpenAI
from tui import collector
from tui.app import create_app
from tui.widgets.composer import Composer
from tui.widgets.answer import AssistantMessage

SIZE = (110, 36)


def settings(stub: StubOpenAI, folder: str) -> Settings:
    return Settings(model=ModelSettings(provider="openai", name="stub", base_url=stub.base_url,
                                        api_key_env="X"), database=Path(folder) / "bench.db")


async def until(condition, timeout=30.0, step=0.001):
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError
        await asyncio.sleep(step)
    return time.perf_counter()


def answer_text(tokens: int) -> str:
    """A realistic answer: paragraphs of ~60 words, a list and a code block."""
    words, out = 0, []
    while words < tokens:
        out.append(" ".join(["word"] * 60) + ".")
        out.append("- one item\n- another item")
        out.append("```python\nfor i in range(3):\n    print(i)\n```")
        words += 60 + 6 + 9
    return "\n\n".join(out)


async def streaming(stub: StubOpenAI, folder: str) -> None:
    text = answer_text(1000)
    app = create_app(settings(stub, folder))
    lag, key_latency = [], []
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.service_ready.is_set())
        for run in range(7):
            stub.push(Reply(text=text, pace=0.002))
            composer = app.query_one(Composer)
            composer.insert(f"stream {run}")
            await pilot.press("enter")
            await until(lambda: app.query(AssistantMessage) and len(app.query(AssistantMessage).last().text) > 100)
            for ch in "typing":  # keys stay responsive mid-stream
                # Posted straight to the composer: pilot.press waits for the
                # screen to go idle, which a stream never lets it do.
                start = time.perf_counter()
                composer.post_message(events.Key(ch, ch))
                key_latency.append((await until(lambda c=ch: composer.text.endswith(c)) - start) * 1000)
                await asyncio.sleep(0.05)
            composer.clear()
            answer = app.query(AssistantMessage).last()
            done = await until(lambda: not app.turns and answer._stream is None)
            lag.append((done - stub.state.last_chunk_at[-1]) * 1000)
            assert answer.text == text
    print(f"streaming {len(stub.requests[-1].body) and 1000}+ tokens at 500 tokens/s (paragraphs, lists, code)")
    print("  last token sent -> answer complete on screen: " + summary(lag))
    print("  key typed mid-stream -> in the composer:       " + summary(key_latency))


async def escape_latency(stub: StubOpenAI, folder: str) -> None:
    app = create_app(settings(stub, folder))
    latencies = []
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.service_ready.is_set())
        for run in range(20):
            stub.push(Reply(text="tok " * 5000, pace=0.005))
            app.query_one(Composer).insert(f"esc {run}")
            await pilot.press("enter")
            await until(lambda: app.query(AssistantMessage) and len(app.query(AssistantMessage).last().text) > 40)
            before = len(stub.disconnects)
            start = time.perf_counter()
            await pilot.press("escape")
            await until(lambda: len(stub.disconnects) > before, timeout=5)
            latencies.append((stub.disconnects[-1].at - start) * 1000)
            await until(lambda: not app.turns)
    print("Esc pressed (Pilot, key dispatch included) -> server sees the disconnect")
    print("  " + summary(latencies))


@contextlib.contextmanager
def collector_policy(python_defaults: bool):
    """Count the collector's pauses; apply tern's policy unless asked not to."""
    pauses: list[float] = []
    full = 0
    started = [0.0]

    def timing(phase: str, info: dict) -> None:
        nonlocal full
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((time.perf_counter() - started[0]) * 1000)
            full += info["generation"] == 2

    if not python_defaults:
        collector.hold_for_startup()
    gc.callbacks.append(timing)
    try:
        yield
    finally:
        gc.callbacks.remove(timing)
        collector.release()
        print(f"  collector ({'Python defaults' if python_defaults else 'tern policy'}): "
              f"{len(pauses)} collections ({full} full), {sum(p > 50 for p in pauses)} over 50 ms, "
              f"longest {max(pauses, default=0):.0f} ms, {sum(pauses) / 1000:.1f} s in all")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python-gc", action="store_true", help="keep Python's collector defaults")
    args = parser.parse_args()
    with StubOpenAI() as stub, tempfile.TemporaryDirectory() as folder:
        with collector_policy(args.python_gc):
            await streaming(stub, folder)
        with collector_policy(args.python_gc):
            await escape_latency(stub, folder)


if __name__ == "__main__":
    asyncio.run(main())
