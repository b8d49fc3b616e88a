"""Instructions from process start to tern's first full frame, against Textual's floor.

Wall-clock start-up on this shared 2-core machine swings by up to 1.4x from
one minute to the next, so start-up work was steered by a count that does
not swing: callgrind's instruction count from exec to the first frame that
shows the thread list and the keys (bench/first_frame.py exits there). The
set-up is bench/app_startup.py's: 300 threads, a 120x40 tmux pane, the floor
being a bare Textual app with a Static and a Footer. With PYTHONHASHSEED
fixed, repeat runs agree to ~0.02%. Each target runs once without valgrind
first, so Python's bytecode cache is warm, as on a user's machine.

    uv run python bench/startup_instructions.py      (needs valgrind and tmux; ~1 min)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from _common import ROOT
from app_startup import PYTHON, bench_config

FIRST_FRAME = ROOT / "bench" / "first_frame.py"
SESSION = "=tern-instructions"


def run_in_tmux(command: str) -> None:
    """Run command in a detached 120x40 pane and wait for it to exit."""
    name = SESSION.lstrip("=")
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command], check=True)
    deadline = time.monotonic() + 300
    while subprocess.run(["tmux", "has-session", "-t", SESSION], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            raise TimeoutError(command)
        time.sleep(0.2)


def instructions(target_args: str, folder: Path) -> int:
    # As on a user's machine, bytecode is cached; this machine may set PYTHONDONTWRITEBYTECODE.
    environment = "env -u PYTHONDONTWRITEBYTECODE PYTHONHASHSEED=0"
    run_in_tmux(f"{environment} {PYTHON} {FIRST_FRAME} {target_args}")  # warms the bytecode cache
    out = folder / "callgrind.out"
    run_in_tmux(f"{environment} valgrind --tool=callgrind --callgrind-out-file={out} "
                f"{PYTHON} {FIRST_FRAME} {target_args} 2>/dev/null")
    match = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if not match:
        raise RuntimeError(f"no instruction count in {out}")
    return int(match.group(1))


def main() -> None:
    for tool in ("valgrind", "tmux"):
        if not shutil.which(tool):
            raise SystemExit(f"needs {tool}")
    folder = Path(tempfile.mkdtemp(prefix="tern-instructions-"))
    try:
        config = bench_config(folder)
        os.chdir(ROOT)
        tern = instructions(f"tern --config {config}", folder)
        floor = instructions(str(ROOT / "bench" / "textual_floor.py"), folder)
        print("instructions from exec to the first full frame (callgrind):")
        print(f"  tern            {tern / 1e6:7.1f} M")
        print(f"  Textual floor   {floor / 1e6:7.1f} M   (a Static and a Footer)")
        print(f"  tern - floor    {(tern - floor) / 1e6:7.1f} M")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
