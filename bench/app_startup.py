"""Launch to first full paint in a real terminal, and resident memory.

Runs `tern` in tmux against a database of 300 threads of 40 messages (built
once into a temporary folder), polling the pane until the thread list and
the footer are drawn. Then reads the process's RSS once the background load
is done (idle) and after one answer from the offline model. One warm-up
launch comes first and is not counted: like any Python program, tern's first
launch on a machine compiles and caches its bytecode.

The poller talks to tmux through one control-mode client (`tmux -C`), so
polling costs a round trip, not a process. Spawning `tmux capture-pane`
every 5 ms, as this bench first did, kept a core of this 2-core machine
busy and slowed the launch it timed: tern by ~40 ms, the Textual floor by
~25 ms. `--poller spawn` still measures that way, for comparison.

    uv run python bench/app_startup.py [--runs 21] [--poller control|spawn]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import ROOT
from first_frame import FIRST_PAINT_MARKS

from graphs.config import ModelSettings, Settings
from tests.seeding import fill_thread

THREADS, TURNS = 300, 20
SESSION = "tern-bench"
# An idle session keeps the tmux server up between launches, as a terminal is
# already running when a user starts tern; the control client attaches to it.
HOLDER = "tern-bench-holder"
# Targets are "=name": tmux otherwise falls back to a prefix match, and
# kill-session -t tern-bench, with no such session, killed the holder. That,
# not tmux, was why the server here sometimes vanished between launches.
TARGET, HOLDER_TARGET = f"={SESSION}", f"={HOLDER}"
PANE = f"{TARGET}:"  # its active pane
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


class ControlClient:
    """One `tmux -C` client attached to the holder session: commands without a process each."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(["tmux", "-C", "attach", "-t", HOLDER_TARGET],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.pending = b""
        self._reply()  # tmux answers the attach itself first

    def _line(self) -> bytes:
        while b"\n" not in self.pending:
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("the tmux control client exited")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def _reply(self) -> str:
        """The next command's output; tmux's notifications between replies are skipped."""
        reply: list[bytes] | None = None
        while True:
            line = self._line()
            if line.startswith(b"%begin"):
                reply = []
            elif reply is not None and line.startswith((b"%end", b"%error")):
                text = b"\n".join(reply).decode(errors="replace")
                if line.startswith(b"%error"):
                    raise RuntimeError(f"tmux: {text}")
                return text
            elif reply is not None:
                reply.append(line)

    def run(self, *args: str) -> str:
        self.process.stdin.write(shlex.join(args).encode() + b"\n")
        return self._reply()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=5)


class SpawningClient:
    """A tmux client process per command, as the bench first polled."""

    def run(self, *args: str) -> str:
        return tmux(*args)

    def close(self) -> None:
        pass


client: ControlClient | SpawningClient = SpawningClient()


def pane() -> str:
    return client.run("capture-pane", "-p", "-t", PANE)


def tern_pid() -> int:
    shell = int(tmux("list-panes", "-t", PANE, "-F", "#{pane_pid}").strip())
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


def launch(command: str) -> float:
    subprocess.run(["tmux", "kill-session", "-t", TARGET], capture_output=True)
    # As on a user's machine, Python caches tern's own bytecode after the first
    # launch; this machine sets PYTHONDONTWRITEBYTECODE, which would recompile
    # every module of tern on every launch (~40 ms).
    start = time.perf_counter()
    client.run("new-session", "-d", "-s", SESSION, "-x", "120", "-y", "40",
               f"env -u PYTHONDONTWRITEBYTECODE {PYTHON} {command}")
    while True:
        screen = pane()
        if all(mark in screen for mark in FIRST_PAINT_MARKS):
            return time.perf_counter() - start
        if time.perf_counter() - start > 20:
            raise TimeoutError(screen)
        time.sleep(0.002 if isinstance(client, ControlClient) else 0.005)


def bench_config(folder: Path) -> Path:
    """A config.toml in folder for a copy of the bench database, which is built once and cached."""
    cached = Path(tempfile.gettempdir()) / f"tern-bench-{THREADS}x{TURNS}.db"
    if not cached.exists():  # building it takes minutes
        started = time.perf_counter()
        asyncio.run(build_database(cached))
        print(f"built the database in {time.perf_counter() - started:.0f} s")
    db = folder / "tern.db"
    shutil.copy(cached, db)
    print(f"database: {THREADS} threads x {2 * TURNS} messages, {db.stat().st_size / 1e6:.1f} MB")
    config = folder / "config.toml"
    config.write_text(f'[storage]\ndatabase = "{db}"\n[model]\nprovider = "offline"\n')
    return config


def summary(times: list[float]) -> str:
    return f"median {statistics.median(times):.0f} ms, min {min(times):.0f} ms, max {max(times):.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--poller", choices=("control", "spawn"), default="control",
                        help="poll the pane through one tmux control client, or a tmux process per poll")
    args = parser.parse_args()
    global client
    if not shutil.which("tmux"):
        raise SystemExit("needs tmux")
    folder = Path(tempfile.mkdtemp(prefix="tern-bench-"))
    keep_server_up()
    if args.poller == "control":
        client = ControlClient()
    try:
        config = bench_config(folder)
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
        print(f"launch -> first full paint (tmux, {args.poller} poller, {args.runs} runs): "
              f"{summary(times[tern])}")
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
        tmux("send-keys", "-t", PANE, "Hello there, offline model", "Enter")
        deadline = time.perf_counter() + 30
        while "last answer" not in pane() and time.perf_counter() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        answered = rss_mb(pid)
        print(f"resident memory: {idle:.0f} MB idle after the background load, "
              f"{answered:.0f} MB after one answer")
    finally:
        client.close()
        for target in (TARGET, HOLDER_TARGET):
            subprocess.run(["tmux", "kill-session", "-t", target], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
