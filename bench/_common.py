"""Shared by the benchmarks: import paths and a percentile helper."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values_ms: list[float]) -> str:
    return (f"median {statistics.median(values_ms):7.2f} ms   p95 {percentile(values_ms, 95):7.2f} ms"
            f"   max {max(values_ms):7.2f} ms   (n={len(values_ms)})")
