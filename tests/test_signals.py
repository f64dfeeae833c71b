"""SIGTERM and SIGKILL to `train` leave no forked worker behind (issue 28, item 9): a worker
that outlived its parent held the caller's pipe open forever."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tokworkbench.core.text.parallel import can_fork

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_texts"
pytestmark = pytest.mark.skipif(not can_fork(), reason="workers are forked only where fork is the default")

# `train` with the thresholds for forking lowered, so that a small corpus forks its workers, and
# the workers made slow, so that the signal surely finds them at work.
WRAPPER = """
import os, sys, time
from tokworkbench.core.text import parallel
parallel.MIN_PARALLEL = 1000
main = os.getpid()
count = parallel._count
def slow_count(*args):
    if os.getpid() != main:
        time.sleep(60)
    return count(*args)
parallel._count = slow_count
from tokworkbench import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def _family(pid: int) -> list[int]:
    """Live processes whose parent is `pid` or that are in its process group."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == pid:
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and (int(fields[1]) == pid or int(fields[2]) == pid):
            found.append(int(entry))
    return found


def _start(tmp_path: Path, *args: str, forked_counting: bool = False) -> subprocess.Popen:
    script = tmp_path / "train_forking.py"
    script.write_text(WRAPPER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if forked_counting:  # compiled counting runs in threads: the forked workers are the numpy path's
        env["TOKWORKBENCH_NO_JIT"] = "1"
    return subprocess.Popen([sys.executable, str(script), "train", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)


def _wait_for_children(proc: subprocess.Popen) -> list[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        children = _family(proc.pid)
        if children:
            return children
        time.sleep(0.02)
    raise AssertionError(f"train forked no worker (exit {proc.poll()})")


def _gone(pids: list[int], wait: float = 10.0) -> list[int]:
    deadline = time.monotonic() + wait
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if Path(f"/proc/{p}").exists() and _state(p) != "Z"]
    return alive


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_sigterm_while_workers_count_exits_143_with_no_child_and_no_temp_file(tmp_path):
    out = tmp_path / "model.json"
    proc = _start(tmp_path, "-o", str(out), "--vocab-size", "300", str(SAMPLES), forked_counting=True)
    children = _wait_for_children(proc)
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)  # the pipe closes: no worker holds it open
        left = _gone(children + _family(proc.pid))
    finally:
        _kill_all(children)
        proc.kill()
    assert proc.returncode == 143, err
    assert err.decode().strip().splitlines() == ["tokworkbench: terminated"]
    assert left == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train_forking.py"]  # no model, no temp file


