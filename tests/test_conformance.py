"""langgraph-checkpoint-conformance, run inside our own suite.

Two registrations: the saver through its async API (the bridge) and through
a sync adapter whose async methods call the sync ones directly, so both
surfaces are held to the same contract.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate

from graphs.checkpointer import HybridSqliteSaver, open_checkpointer


class SyncAdapter(BaseCheckpointSaver):
    """Exposes a saver's *sync* methods under the async names the suite calls."""

    def __init__(self, inner: HybridSqliteSaver) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    async def aget_tuple(self, config):
        return self.inner.get_tuple(config)

    async def alist(self, config, *, filter=None, before=None, limit=None):
        for item in list(self.inner.list(config, filter=filter, before=before, limit=limit)):
            yield item

    async def aput(self, config, checkpoint, metadata, new_versions):
        return self.inner.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id, task_path=""):
        self.inner.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id):
        self.inner.delete_thread(thread_id)

    async def adelete_for_runs(self, run_ids):
        self.inner.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id, target_thread_id):
        self.inner.copy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids, *, strategy="keep_latest"):
        self.inner.prune(thread_ids, strategy=strategy)

    def get_next_version(self, current, channel):
        return self.inner.get_next_version(current, channel)


def _registration(name: str, wrap):
    async def factory():
        with tempfile.TemporaryDirectory() as folder:
            saver = open_checkpointer(Path(folder) / "conformance.db")
            try:
                yield wrap(saver)
            finally:
                saver.close()

    return checkpointer_test(name=name)(factory)


@pytest.mark.parametrize(
    "name, wrap",
    [("HybridSqliteSaver-async", lambda s: s), ("HybridSqliteSaver-sync", SyncAdapter)],
)
async def test_conformance_all_capabilities(name, wrap):
    report = await validate(_registration(name, wrap))
    summary = {
        cap: (result.detected, result.tests_passed, result.tests_failed)
        for cap, result in report.results.items()
    }
    failures = {
        cap: result.failures for cap, result in report.results.items() if result.tests_failed
    }
    assert not failures, failures
    undetected = [cap for cap, (detected, _, _) in summary.items() if not detected]
    assert undetected == [], f"capabilities not implemented: {undetected}"
    assert all(passed > 0 for _, passed, _ in summary.values()), summary
