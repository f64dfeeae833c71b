"""Key press to updated screen, in the real app (headless, Textual's pilot), on 1 MB and 10 MB.

    python benchmarks/app_latency.py [CORPUS]   # default: bench-data/corpus/mixed-10M.txt and its first 1 MB

Measures, per corpus and screen size (80x24 and 200x60):
- one merge (`n`) and one undo (`u`) from key press until the app has handled it and
  repainted (median and worst of 20, through the pilot, which adds waits of its own);
- `n` again as a terminal sends it, without the pilot (until the session has the new merge),
  and the CPU time spent including the repaint;
- the core's own step/undo time for comparison;
- how long a key press (`?`, open help) waits while `r` trains in the child process;
- cancel: from `escape` to the run's end being on screen, and how many merges the child made
  after the key (the child's step counter, read when the cancel reached it).
"""

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokworkbench.app import WorkbenchApp  # noqa: E402
from tokworkbench.app.dialogs import HelpDialog  # noqa: E402
from tokworkbench.core.settings import Settings  # noqa: E402

PRESSES = 20
SIZES = [(80, 24), (200, 60)]
DEFAULT = ROOT / "bench-data" / "corpus" / "mixed-10M.txt"


def ms(values):
    return f"median {statistics.median(values) * 1e3:6.1f} ms, worst {max(values) * 1e3:6.1f} ms"


async def wait_until(condition, limit=120.0):
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > limit:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.0005)


async def measure(path: Path, size: tuple[int, int]) -> None:
    app = WorkbenchApp([str(path)], settings=Settings(target=60_000))
    async with app.run_test(size=size) as pilot:
        t0 = time.perf_counter()
        await app.workers.wait_for_complete()
        await pilot.pause()
        load = time.perf_counter() - t0
        main = app.main
        session = main.session
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
            merged = session.steps
            c, t = time.process_time(), time.perf_counter()
            app.simulate_key("n")
            await wait_until(lambda: session.steps != merged)
            direct.append(time.perf_counter() - t)
            await pilot.pause()  # the repaint, whose CPU time counts below
            cpu.append(time.process_time() - c)
        for _ in range(PRESSES):
            t = time.perf_counter()
            session.step()
            core_steps.append(time.perf_counter() - t)
        for _ in range(PRESSES):
            t = time.perf_counter()
            session.undo()
            core_undos.append(time.perf_counter() - t)
        main.refresh_snapshot()
        waits = []
        await pilot.press("r")
        for _ in range(8):
            if not main.running:
                break
            t = time.perf_counter()
            app.simulate_key("question_mark")  # like a real key: no waiting for the app to go idle
            await wait_until(lambda: isinstance(app.screen, HelpDialog))
            waits.append(time.perf_counter() - t)
            app.simulate_key("escape")
            await wait_until(lambda: not isinstance(app.screen, HelpDialog))
            await asyncio.sleep(0.3)
        cancel = None
        if main.running:
            t = time.perf_counter()
            app.simulate_key("escape")
            await wait_until(lambda: not main.running)
            cancel = time.perf_counter() - t
        merged = session.steps
        after = main.last_run.after_cancel if main.last_run else None
    mb = path.stat().st_size / 1e6
    print(f"{path.name} ({mb:.1f} MB) at {size[0]}x{size[1]}: loaded in {load:.2f} s")
    print(f"  merge key  n : {ms(steps)}   (core step alone: {ms(core_steps)})")
    print(f"  undo key   u : {ms(undos)}   (core undo alone: {ms(core_undos)})")
    print(f"  n without the pilot: key to new state {ms(direct)}; CPU with the repaint {ms(cpu)}")
    if waits:
        print(f"  key while r runs: {ms(waits)} over {len(waits)} presses")
    if cancel is not None:
        print(f"  cancel: escape to the run's end on screen {cancel * 1e3:.0f} ms; {after} merges made after "
              f"the key; {merged:,} merges in all")


def main():
    big = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not big.is_file():
        sys.exit(f"no corpus at {big}: run `make corpus` or name a file")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / f"{big.stem}-first-1MB.txt"
        data = big.read_bytes()[:1_000_000]
        small.write_bytes(data[: data.rfind(b"\n") + 1])
        for path in (small, big):
            for size in SIZES:
                asyncio.run(measure(path, size))


if __name__ == "__main__":
    main()
