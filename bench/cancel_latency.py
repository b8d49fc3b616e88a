"""Cancel latency: from task.cancel() on a streaming turn to the server seeing the disconnect.

    uv run python bench/cancel_latency.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from _common import summary

from graphs.config import ModelSettings, Settings
from graphs.conversations import Conversations, Token
from tests.stub_openai import Reply, StubOpenAI

RUNS = 50


async def main() -> None:
    with StubOpenAI() as stub, tempfile.TemporaryDirectory() as folder:
        service = Conversations.open(Settings(
            model=ModelSettings(provider="openai", base_url=stub.base_url, api_key_env="X"),
            database=Path(folder) / "bench.db"))
        thread = await service.create_thread()
        latencies = []
        for run in range(RUNS):
            stub.push(Reply(text="token " * 1000, pace=0.002))
            tokens = 0
            streaming = asyncio.Event()

            async def turn():
                nonlocal tokens
                async for event in service.send(thread.id, f"run {run}"):
                    if isinstance(event, Token):
                        tokens += 1
                        if tokens == 10:
                            streaming.set()

            task = asyncio.create_task(turn())
            await streaming.wait()
            cancelled_at = time.perf_counter()
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            disconnect = await asyncio.to_thread(stub.wait_for_disconnect, run + 1)
            latencies.append((disconnect.at - cancelled_at) * 1000)
        service.close()
    print("cancel -> server sees disconnect (service, ChatOpenAI over HTTP to 127.0.0.1)")
    print("  " + summary(latencies))


if __name__ == "__main__":
    asyncio.run(main())
