"""Launch to first full paint in a real terminal, and resident memory.

Runs `tern` in tmux against a database of 300 threads of 40 messages (built
once into a temporary folder), polling the pane until the thread list and
the footer are drawn. Then reads the process's RSS once the background load
is done (idle) and after one answer from the offline model. One warm-up
launch comes first and is not counted: like any Python program, tern's first
launch on a machine compiles and caches its bytecode.

    uv run python bench/app_startup.py [--runs 21]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import ROOT

from graphs.config import ModelSettings, Settings
from tests.seeding import fill_thread

THREADS, TURNS = 300, 20
SESSION = "tern-bench"
# An idle session keeps the tmux server up between launches: a terminal is
# already running when a user starts tern, and a server exiting as the last
# session closes can refuse the next new-session.
HOLDER = "tern-bench-holder"
PYTHON = ROOT / ".venv" / "bin" / "python"


async def build_database(path: Path) -> None:
    settings = Settings(model=ModelSettings(provider="offline"), database=path)
    for i in range(THREADS):
        await fill_thread(settings, TURNS, title=f"Benchmark thread {i:03d}")


def tmux(*args: str) -> str:
    done = subprocess.run(["tmux", *args], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def pane() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def tern_pid() -> int:
    shell = int(tmux("list-panes", "-t", SESSION, "-F", "#{pane_pid}").strip())
    # uv run execs python; find the python process below the pane
    out = subprocess.run(["ps", "-eo", "pid,ppid,comm"], capture_output=True, text=True).stdout
    children = {}
    for line in out.splitlines()[1:]:
        pid, ppid, comm = line.split(None, 2)
        children.setdefault(int(ppid), []).append((int(pid), comm))
    stack = [shell]
    while stack:
        pid = stack.pop()
        for child, comm in children.get(pid, []):
            if "python" in comm or comm.startswith("tern"):
                return child
            stack.append(child)
    return shell


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def keep_server_up() -> None:
    """Start the idle holder session unless it is there (tmux then says 'duplicate session')."""
    subprocess.run(["tmux", "new-session", "-d", "-s", HOLDER, "sleep 3600"], capture_output=True)


def new_session(name: str, command: str) -> float:
    """Start a detached session, return when the successful attempt began.

    tmux 3.3a here sometimes loses its server as a session closes.
    """
    for attempt in range(3):
        started = time.perf_counter()
        try:
            tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
            return started
        except RuntimeError:
            if attempt == 2:
                raise
            time.sleep(0.5)
            keep_server_up()


def launch(command: str) -> float:
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    # As on a user's machine, Python caches tern's own bytecode after the first
    # launch; this machine sets PYTHONDONTWRITEBYTECODE, which would recompile
    # every module of tern on every launch (~40 ms).
    start = new_session(SESSION, f"env -u PYTHONDONTWRITEBYTECODE {PYTHON} {command}")
    while True:
        screen = pane()
        if "Benchmark thread 299" in screen and "Keys" in screen:
            return time.perf_counter() - start
        if time.perf_counter() - start > 20:
            raise TimeoutError(screen)
        time.sleep(0.005)


def summary(times: list[float]) -> str:
    return f"median {statistics.median(times):.0f} ms, min {min(times):.0f} ms, max {max(times):.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    if not shutil.which("tmux"):
        raise SystemExit("needs tmux")
    folder = Path(tempfile.mkdtemp(prefix="tern-bench-"))
    # Building the database takes minutes; it is kept between runs here.
    cached = Path(tempfile.gettempdir()) / f"tern-bench-{THREADS}x{TURNS}.db"
    keep_server_up()
    try:
        db = folder / "tern.db"
        if not cached.exists():
            started = time.perf_counter()
            asyncio.run(build_database(cached))
            print(f"built the database in {time.perf_counter() - started:.0f} s")
        shutil.copy(cached, db)
        print(f"database: {THREADS} threads x {2 * TURNS} messages, {db.stat().st_size / 1e6:.1f} MB")
        config = folder / "config.toml"
        config.write_text(f'[storage]\ndatabase = "{db}"\n[model]\nprovider = "offline"\n')
        os.chdir(ROOT)
        tern = f"-m tui.cli --config {config}"
        floor = str(ROOT / "bench" / "textual_floor.py")
        launch(tern)  # warm-up: fills the bytecode and page caches, not counted
        launch(floor)
        # Interleaved, so both see the same machine: on this shared box the
        # same launch measures up to 1.4x slower from one minute to the next.
        times: dict[str, list[float]] = {tern: [], floor: []}
        for _ in range(args.runs):
            for command in times:
                time.sleep(1.0)
                times[command].append(launch(command) * 1000)
        print(f"launch -> first full paint (tmux, {args.runs} runs): {summary(times[tern])}")
        print(f"  Textual's floor, a Static and a Footer, same runs: {summary(times[floor])}")
        extra = [ours - base for ours, base in zip(times[tern], times[floor])]
        print(f"  tern minus the floor, run by run: median {statistics.median(extra):.0f} ms")
        # memory: idle after the background load, then after one answer
        launch(tern)
        deadline = time.perf_counter() + 20
        while "loading" in pane() and time.perf_counter() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        pid = tern_pid()
        idle = rss_mb(pid)
        tmux("send-keys", "-t", SESSION, "Hello there, offline model", "Enter")
        deadline = time.perf_counter() + 30
        while "last answer" not in pane() and time.perf_counter() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        answered = rss_mb(pid)
        print(f"resident memory: {idle:.0f} MB idle after the background load, "
              f"{answered:.0f} MB after one answer")
    finally:
        for session in (SESSION, HOLDER):
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
