"""What tern adds to a turn: Conversations.send vs a bare ChatOpenAI.astream.

Both talk to the same stub server on 127.0.0.1 streaming 50 chunks, all at
once and then paced at 2 ms, so the difference is tern's own work: the lock, checkpointing the
user's message, the graph, saving the answer and moving the head.

    uv run python bench/turn_overhead.py
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from _common import percentile
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from graphs.config import ModelSettings, Settings
from graphs.conversations import Conversations, Token
from tests.stub_openai import Reply, StubOpenAI

RUNS = 40
TEXT = "word " * 50


async def bare(stub: StubOpenAI) -> tuple[float, float]:
    model = ChatOpenAI(base_url=stub.base_url, api_key="x", model="stub", max_retries=0,
                       streaming=True, stream_usage=True)
    start = time.perf_counter()
    first = None
    async for chunk in model.astream([HumanMessage("hello")]):
        if first is None and chunk.content:
            first = time.perf_counter()
    return first - start, time.perf_counter() - start


async def tern(service: Conversations, thread_id: str) -> tuple[float, float]:
    start = time.perf_counter()
    first = None
    async for event in service.send(thread_id, "hello"):
        if first is None and isinstance(event, Token):
            first = time.perf_counter()
    return first - start, time.perf_counter() - start


async def measure(pace: float) -> None:
    with StubOpenAI() as stub, tempfile.TemporaryDirectory() as folder:
        stub.state.default = Reply(text=TEXT, pace=pace)
        service = Conversations.open(Settings(
            model=ModelSettings(provider="openai", base_url=stub.base_url, api_key_env="X"),
            database=Path(folder) / "bench.db"))
        thread = await service.create_thread()
        for _ in range(3):  # warm both paths (imports, connection pool)
            await bare(stub)
            await tern(service, thread.id)
        results = {"bare ChatOpenAI.astream": [], "tern Conversations.send": []}
        for _ in range(RUNS):
            results["bare ChatOpenAI.astream"].append(await bare(stub))
            # a fresh thread per run, so the thread's length is not what is measured
            fresh = await service.create_thread()
            results["tern Conversations.send"].append(await tern(service, fresh.id))
        service.close()
    print(f"chunks {'all at once' if not pace else f'every {pace * 1000:.0f} ms'}")
    print(f"{'path':<26} {'first token (median/p95)':>26} {'whole turn (median/p95)':>26}")
    medians = {}
    for name, rows in results.items():
        ttft = [r[0] * 1000 for r in rows]
        total = [r[1] * 1000 for r in rows]
        medians[name] = (statistics.median(ttft), statistics.median(total))
        print(f"{name:<26} {statistics.median(ttft):>11.2f} / {percentile(ttft, 95):>6.2f} ms "
              f"{statistics.median(total):>13.2f} / {percentile(total, 95):>6.2f} ms")
    b, t = medians["bare ChatOpenAI.astream"], medians["tern Conversations.send"]
    print(f"tern adds {t[0] - b[0]:.2f} ms to the first token and {t[1] - b[1]:.2f} ms to the turn "
          f"(medians, n={RUNS})\n")


async def main() -> None:
    # All at once, the graph's stream task goes on parsing the chunks already in
    # the socket buffer (~24 per turn in a profile) before the first reaches
    # the caller; paced like a real server (500 tokens/s), it is handed on as
    # it arrives.
    for pace in (0.0, 0.002):
        await measure(pace)


if __name__ == "__main__":
    asyncio.run(main())
