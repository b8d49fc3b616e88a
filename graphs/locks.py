"""One turn at a time per conversation, within a process and across processes.

Inside a process an ``asyncio.Lock`` per thread orders turns. Across tern
processes sharing a database, an advisory ``flock`` on a small per-thread
lock file does the same; the kernel drops it when a process dies, even by
``kill -9``, so a crash never leaves a conversation locked. (POSIX only; on
other systems the cross-process half is skipped.)
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class ThreadBusyError(Exception):
    """Another tern process is running a turn on this conversation."""


class ThreadLocks:
    def __init__(self, folder: Path, *, wait_seconds: float = 30.0, poll: float = 0.05) -> None:
        self.folder = folder
        self.wait_seconds = wait_seconds
        self.poll = poll
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def is_locked(self, thread_id: str) -> bool:
        return thread_id in self._locks and self._locks[thread_id].locked()

    def _path(self, thread_id: str) -> Path:
        # Thread ids are ours (uuids), but hash anyway: a file name must never
        # be able to climb out of the folder.
        return self.folder / (hashlib.sha256(thread_id.encode()).hexdigest()[:32] + ".lock")

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        async with self._locks[thread_id]:
            fd = await self._acquire_file(thread_id)
            try:
                yield
            finally:
                if fd is not None:
                    os.close(fd)  # closing the descriptor releases the flock

    async def _acquire_file(self, thread_id: str) -> int | None:
        if fcntl is None:
            return None
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self._path(thread_id), os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.wait_seconds
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise ThreadBusyError(
                            "This conversation is busy in another tern window. "
                            "Wait for that answer to finish (or press Esc there), then try again."
                        ) from None
                    await asyncio.sleep(self.poll)
        except BaseException:
            os.close(fd)
            raise

    def forget(self, thread_id: str) -> None:
        with contextlib.suppress(OSError):
            self._path(thread_id).unlink()
