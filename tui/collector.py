"""When Python's cyclic garbage collector may run in a long-lived terminal app.

Measured on this stack (the 2-core development machine):

- Start-up: importing and mounting Textual triggered ~145 collections before
  the first frame, 65-80 ms of the launch, and they found 4,200 objects
  (0.65 MB). So `tern` holds the collector off until the first frame.
- Streaming (bench/app_pilot.py, seven 1,000-token answers at 500 tokens/s):
  with Python's defaults, 49 full collections, each walking every object
  Textual, LangGraph and the answers' widgets hold; the pauses grew from 30
  to 700 ms and added up to ~19 s, and the answer landed on screen up to
  0.9 s after its last token. Everything imported and built before the first
  answer lives as long as the app, so it is frozen out of the collector's
  walk, and young objects get more room before a collection: re-rendering a
  streaming answer makes many objects that die within a frame, and a small
  first generation promoted them to the old ones. With both: no full
  collection in that run, pauses at most ~150 ms, ~3 s in all.

The price of freezing without collecting first: garbage alive at that moment
is never freed (0.65 MB measured at the first frame). Only `tern` applies
this policy; an app run by tests keeps Python's defaults.
"""

from __future__ import annotations

import gc

#: Allocations before a young collection (Python's default is 700), how many
#: young collections per middle one, and middle ones per full one (10, 10).
THRESHOLDS = (10_000, 10, 50)

_thresholds_before: tuple[int, int, int] | None = None  # set while tern's policy is on


def hold_for_startup() -> None:
    """Turn the collector off until :func:`settle`; `tern` calls this before importing Textual."""
    global _thresholds_before
    _thresholds_before = gc.get_threshold()
    gc.disable()


def settle() -> None:
    """Freeze what is alive now and let the collector run on what comes after.

    The app calls this after its first frame and again once LangGraph and
    the model client have loaded. A no-op unless :func:`hold_for_startup` ran.
    """
    if _thresholds_before is None:
        return
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    gc.enable()


def release() -> None:
    """Back to the collector as it was, for when `tern` returns to its caller."""
    global _thresholds_before
    if _thresholds_before is not None:
        gc.unfreeze()
        gc.set_threshold(*_thresholds_before)
        _thresholds_before = None
    gc.enable()
