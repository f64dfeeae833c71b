"""Key press to updated screen, in the real app (headless, Textual's pilot), on 1 MB and 10 MB.

    python benchmarks/app_latency.py [CORPUS] [--cancel-at N ...] [--cancel-only] [--sizes WxH ...]
    # default: bench-data/corpus/mixed-10M.txt and its first 1 MB; cancel at 5,000 merges

Measures, per corpus and screen size (80x24, 160x48 and 200x60):
- one merge (`n`) and one undo (`u`) from key press until the app has handled it and
  repainted (median and worst of 20, through the pilot, which adds waits of its own);
- `n` again as a terminal sends it, without the pilot: until the session has the new merge,
  until the first frame painted with it (one frame shows the merge in the tables and the
  text), and the CPU time spent including the repaint;
- the core's own step/undo time for comparison;
- how long a key press (`?`, open help) waits while `r` trains in the child process;
- cancel, once the run has made N merges (`--cancel-at`, several allowed): from `escape` to the
  frame that shows the run's stop (its line under the panes; the panes take the child's last
  view in the frame after, while its state comes back), and to
  the session being usable (an `n` pressed as soon as the keys wake has merged on the state the
  child reached); how many merges the child made after the key (its
  step counter, read when the cancel reached it); and the longest the event loop went without
  running (a 1 ms heartbeat's worst gap) from the key until that `n` had merged.
`--cancel-only` skips the step/undo timings. Timings come with `os.getloadavg()`: the machine's
load moves them more than anything measured here.
"""

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quiet import wait_for_quiet  # noqa: E402

from tokworkbench.app import WorkbenchApp  # noqa: E402
from tokworkbench.app.dialogs import HelpDialog  # noqa: E402
from tokworkbench.core.session.settings import Settings  # noqa: E402

PRESSES = 20
SIZES = [(80, 24), (160, 48), (200, 60)]  # 160x48: the size the key-to-frame bar names
DEFAULT = ROOT / "bench-data" / "corpus" / "mixed-10M.txt"


def ms(values):
    return f"median {statistics.median(values) * 1e3:6.1f} ms, worst {max(values) * 1e3:6.1f} ms"


async def wait_until(condition, limit=120.0):
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > limit:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.0005)


async def heartbeat(since: list, worst: list) -> None:
    """The worst gap between two turns of the event loop once `since[0]` is set."""
    last = time.perf_counter()
    while True:
        await asyncio.sleep(0.001)
        now = time.perf_counter()
        if since[0] is not None and now > since[0]:
            worst[0] = max(worst[0], now - max(last, since[0]))
        last = now


async def measure_keys(app, pilot, main, session) -> list[str]:
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
    direct, cpu, framed = [], [], []  # a key as a terminal sends it: no pilot waits before or after
    frames = _frame_clock(app.screen, lambda: session.steps)
    for _ in range(PRESSES):
        merged = session.steps
        c, t = time.process_time(), time.perf_counter()
        app.simulate_key("n")
        await wait_until(lambda: session.steps != merged)
        direct.append(time.perf_counter() - t)
        shown = lambda: [f for f, steps in frames if f > t and steps != merged]  # noqa: E731
        await wait_until(shown)  # the first frame painted with the merge
        framed.append(min(shown()) - t)
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
    return [f"  merge key  n : {ms(steps)}   (core step alone: {ms(core_steps)})",
            f"  undo key   u : {ms(undos)}   (core undo alone: {ms(core_undos)})",
            f"  n without the pilot: key to new state {ms(direct)}; CPU with the repaint {ms(cpu)}",
            f"  n without the pilot: key to the first frame painted with the merge {ms(framed)}"]


def _frame_clock(screen, steps) -> list[tuple[float, int]]:
    """When each of the screen's frames finished painting, and the session's step count then.
    Textual has no public hook for a painted frame: this wraps the screen's compositor refresh
    (a private method), so that the key-to-frame time measures what a user sees, not only the
    state behind it; a frame painted before the key's handler ran does not count.
    Headless, Textual skips turning a frame into the terminal's bytes (1 ms at 160x48): the
    frame here does that too, as it does in a terminal."""
    times: list[tuple[float, int]] = []
    paint = screen._compositor_refresh
    render = screen._compositor.render_update
    console = screen.app.console

    def rendered(*args, **kwargs):
        update = render(*args, **kwargs)
        if update is not None:
            update.render_segments(console)
        return update

    screen._compositor.render_update = rendered

    def painted(*args, **kwargs):
        result = paint(*args, **kwargs)
        times.append((time.perf_counter(), steps()))
        return result

    screen._compositor_refresh = painted
    return times


async def measure_cancel(app, pilot, main, session, cancel_at: int) -> str:
    session.undo_all()
    main.refresh_snapshot()
    await pilot.pause()
    since, worst = [None], [0.0]
    beat = asyncio.create_task(heartbeat(since, worst))
    await pilot.press("r")
    await wait_until(lambda: not main.running or (main.snapshot is not None and main.snapshot.steps >= cancel_at))
    if not main.running:
        beat.cancel()
        return f"  cancel at {cancel_at:,}: the run ended first ({session.steps:,} merges)"
    load = os.getloadavg()
    main.run.stop_painted_at = None
    since[0] = t = time.perf_counter()
    app.simulate_key("escape")
    await wait_until(lambda: main.stop_painted_at is not None or not main.running)  # a frame shows the stop
    shown = (main.stop_painted_at or time.perf_counter()) - t
    await wait_until(lambda: not main.running)  # n acts from here: the state is back
    merged = session.steps  # the child's merges are the session's now
    app.simulate_key("n")
    await wait_until(lambda: session.steps == merged + 1)
    usable = time.perf_counter() - t
    await asyncio.sleep(0.05)  # a stall right after the merge counts too
    beat.cancel()
    after = main.last_run.after_cancel if main.last_run else None
    return (f"  cancel at {cancel_at:,}: escape -> stopped on screen {shown * 1e3:5.0f} ms, -> usable (n merged) "
            f"{usable * 1e3:5.0f} ms; {after} merges after the key, {merged:,} in all; worst event-loop stall "
            f"{worst[0] * 1e3:4.0f} ms; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


async def measure(path: Path, size: tuple[int, int], cancel_at: list[int], cancel_only: bool) -> None:
    app = WorkbenchApp([str(path)], settings=Settings(target=60_000))
    lines = []
    async with app.run_test(size=size) as pilot:
        t0 = time.perf_counter()
        await app.workers.wait_for_complete()
        await pilot.pause()
        load = time.perf_counter() - t0
        main = app.main
        session = main.session
        if not cancel_only:
            lines += await measure_keys(app, pilot, main, session)
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
            if main.running:
                app.simulate_key("escape")
                await wait_until(lambda: not main.running)
            if waits:
                lines.append(f"  key while r runs: {ms(waits)} over {len(waits)} presses")
        for n in cancel_at:
            lines.append(await measure_cancel(app, pilot, main, session, n))
    mb = path.stat().st_size / 1e6
    print(f"{path.name} ({mb:.1f} MB) at {size[0]}x{size[1]}: loaded in {load:.2f} s", flush=True)
    print("\n".join(lines), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--cancel-at", type=int, nargs="+", default=[5000], metavar="N")
    parser.add_argument("--cancel-only", action="store_true", help="skip the step and undo timings")
    parser.add_argument("--big-only", action="store_true", help="skip the first-1-MB corpus")
    parser.add_argument("--sizes", nargs="+", default=[f"{w}x{h}" for w, h in SIZES], metavar="WxH",
                        help="screen sizes, each measured in this process after the last (default: all three)")
    parser.add_argument("--max-load", type=float, default=0.5, help="the 1-minute load each size waits for")
    parser.add_argument("--patience", type=float, default=600, help="seconds to wait for it")
    args = parser.parse_args()
    big = args.corpus
    if not all(re.fullmatch(r"\d+x\d+", size) for size in args.sizes):
        sys.exit(f"--sizes takes WxH, e.g. 160x48: {' '.join(args.sizes)}")
    sizes = [tuple(map(int, size.split("x"))) for size in args.sizes]
    if not big.is_file():
        sys.exit(f"no corpus at {big}: run `make corpus` or name a file")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / f"{big.stem}-first-1MB.txt"
        data = big.read_bytes()[:1_000_000]
        small.write_bytes(data[: data.rfind(b"\n") + 1])
        for path in (big,) if args.big_only else (small, big):
            for size in sizes:
                before = wait_for_quiet(args.max_load, args.patience)
                print(f"(load {before:.2f} before this process's measures; the run itself then loads the machine)",
                      flush=True)
                asyncio.run(measure(path, size, args.cancel_at, args.cancel_only))


if __name__ == "__main__":
    main()
