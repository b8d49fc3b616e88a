"""Run tern (or another Textual app) and exit the moment its first full frame is written.

For bench/startup_instructions.py, which counts the instructions up to that
point. "Full" is what bench/app_startup.py waits for on the pane: the newest
thread of the bench database, and the keys. It imports nothing beyond what
it runs, so the count is the app's.

    first_frame.py tern ARGS...    |    first_frame.py SCRIPT
"""

from __future__ import annotations

import os
import sys

FIRST_PAINT_MARKS = ("Benchmark thread 299", "Keys")


def exit_at_first_full_frame() -> None:
    from textual.drivers.linux_driver import LinuxDriver

    seen: set[str] = set()
    write = LinuxDriver.write

    def write_then_maybe_exit(self: LinuxDriver, data: str) -> None:
        write(self, data)
        seen.update(mark for mark in FIRST_PAINT_MARKS if mark in data)
        if len(seen) == len(FIRST_PAINT_MARKS):
            os._exit(0)  # now, before anything after the first frame runs

    LinuxDriver.write = write_then_maybe_exit


if __name__ == "__main__":
    target, args = sys.argv[1], sys.argv[2:]
    sys.argv = [target, *args]
    exit_at_first_full_frame()
    if target == "tern":
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from tui.cli import main

        sys.exit(main(args))
    import runpy

    runpy.run_path(target, run_name="__main__")
