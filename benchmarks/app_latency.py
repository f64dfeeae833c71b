"""Key press to updated screen, in the real app (headless, Textual's pilot), on 1 MB and 10 MB.

    python benchmarks/app_latency.py [CORPUS]   # default: bench-data/mixed-10M.txt and its first 1 MB

Measures, per corpus: one merge (`n`) and one undo (`u`) from key press until the app has handled
it and repainted (median and worst of 20, through the pilot, which adds waits of its own); `n`
again without the pilot (until the trainer has the new merge, and the CPU time spent including the
repaint); the core's own step/undo time for comparison; and how long a key press (`?`, open help)
waits while `r` trains in the worker.
"""

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from train_vs_hf import default_corpus  # noqa: E402
from tokworkbench.app import WorkbenchApp  # noqa: E402
from tokworkbench.app.dialogs import HelpDialog  # noqa: E402
from tokworkbench.core.settings import Settings  # noqa: E402

PRESSES = 20


def ms(values):
    return f"median {statistics.median(values) * 1e3:6.1f} ms, worst {max(values) * 1e3:6.1f} ms"


async def measure(path: Path) -> None:
    app = WorkbenchApp([str(path)], settings=Settings(target=60_000))
    async with app.run_test(size=(160, 48)) as pilot:
        t0 = time.perf_counter()
        await app.workers.wait_for_complete()
        await pilot.pause()
        load = time.perf_counter() - t0
        await pilot.press("N")  # start from a few merges in
        steps, undos, core_steps, core_undos = [], [], [], []
        for _ in range(PRESSES):
            t = time.perf_counter()
            await pilot.press("n")
            await pilot.pause()
            steps.append(time.perf_counter() - t)
        for _ in range(PRESSES):
            t = time.perf_counter()
            await pilot.press("u")
            await pilot.pause()
            undos.append(time.perf_counter() - t)
        direct, cpu = [], []  # a key as a terminal sends it: no pilot waits before or after
        for _ in range(PRESSES):
            merged = app.main.session.steps
            c, t = time.process_time(), time.perf_counter()
            app.simulate_key("n")
            while app.main.session.steps == merged:
                await asyncio.sleep(0.0002)
            direct.append(time.perf_counter() - t)
            await pilot.pause()  # the repaint, whose CPU time counts below
            cpu.append(time.process_time() - c)
        for _ in range(PRESSES):
            t = time.perf_counter()
            app.main.session.step()
            core_steps.append(time.perf_counter() - t)
        for _ in range(PRESSES):
            t = time.perf_counter()
            app.main.session.undo()
            core_undos.append(time.perf_counter() - t)
        app.main.refresh_snapshot()
        waits = []
        await pilot.press("r")
        for _ in range(10):
            if not app.main.running:
                break
            t = time.perf_counter()
            app.simulate_key("question_mark")  # like a real key: no waiting for the app to go idle
            while not isinstance(app.screen, HelpDialog):
                await asyncio.sleep(0.0005)
            waits.append(time.perf_counter() - t)
            app.simulate_key("escape")
            while isinstance(app.screen, HelpDialog):
                await asyncio.sleep(0.001)
            await asyncio.sleep(0.3)
        app.main.action_cancel()
        while app.main.running:
            await asyncio.sleep(0.01)
        merged = app.main.session.steps
    size = path.stat().st_size / 1e6
    print(f"{path.name} ({size:.1f} MB): loaded in {load:.2f} s")
    print(f"  merge key  n : {ms(steps)}   (core step alone: {ms(core_steps)})")
    print(f"  undo key   u : {ms(undos)}   (core undo alone: {ms(core_undos)})")
    print(f"  n without the pilot: key to new state {ms(direct)}; CPU with the repaint {ms(cpu)}")
    if waits:
        print(f"  key while r runs: {ms(waits)} over {len(waits)} presses ({merged:,} merges done by cancel)")


def main():
    big = Path(sys.argv[1]) if len(sys.argv) > 1 else default_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / f"{big.stem}-first-1MB.txt"
        data = big.read_bytes()[:1_000_000]
        small.write_bytes(data[: data.rfind(b"\n") + 1])
        for path in (small, big):
            asyncio.run(measure(path))


if __name__ == "__main__":
    main()
