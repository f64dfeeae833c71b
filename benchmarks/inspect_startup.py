"""Seconds from Python start to the first screen of `tokworkbench -m NAME` on the sample texts
(headless, 160×48), through the command line's own path: its imports, reading the model, the app
until the corpus pane draws tokens. Run it once per case, so each starts cold:

    python benchmarks/inspect_startup.py cl100k_base
    python benchmarks/inspect_startup.py            # the training workbench, for comparison

"First frame" is when the first frame with the corpus's tokens is composed and turned into the
bytes a terminal would get (headless, the app skips that step; this script does it itself, so its
time counts). "First screen" is the first such frame in which every table on screen also holds
the rows it draws (a table's rows not yet held are drawn `…` and come by a message round trip).
"Idle" is when the process next leaves the CPU alone (Textual's pilot waits up to 1 s for that):
the background count of the whole corpus runs after the first frame, and keys wait behind it.

It prints the CPU seconds of this process too: on a machine shared with other work the wall time
grows with the load, the CPU time much less, and the load averages are printed beside it.

The first run after a new ranks file recovers its merges and keeps them in the derived cache
(core/files/derivedcache.py); later runs read them from there. To time a cold cache, point
XDG_CACHE_HOME at an empty folder.
"""
import time  # noqa: E402

T0 = time.perf_counter()
C0 = time.process_time()
import asyncio  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from textual._compositor import CompositorUpdate  # noqa: E402

import tokworkbench.app as app_package  # noqa: E402
from tokworkbench.app.widgets.rowsview import RowsView  # noqa: E402
from tokworkbench.cli import main  # noqa: E402

T1 = time.perf_counter()


def all_rows_held(app) -> bool:
    """Whether every table on screen holds the rows it shows (none drawn as `…`)."""
    for view in app.screen.query(RowsView):
        if view.display and view.region.height:
            top = view.scroll_offset.y
            if any(view.row(i) is None for i in range(top, min(view.total, top + view._visible_rows()))):
                return False
    return True


def first_screen(paths, settings, inspect=None) -> int:
    loaded = time.perf_counter()

    async def run():
        app = app_package.WorkbenchApp(paths, settings, inspect)
        frames: list[tuple[float, float]] = []  # (wall, CPU) of the first frame, of the first screen
        display = app._display

        def timed_display(screen, renderable):
            display(screen, renderable)
            snap = app.main.snapshot if app.screen_stack else None
            if len(frames) < 2 and isinstance(renderable, CompositorUpdate) and snap is not None and snap.window.spans:
                renderable.render_segments(app.console)  # what a terminal's driver would write
                now = time.perf_counter(), time.process_time()
                if not frames:
                    frames.append(now)
                if all_rows_held(app):
                    frames.append(now)

        app._display = timed_display
        async with app.run_test(size=(160, 48)) as pilot:
            while len(frames) < 2:
                await asyncio.sleep(0.005)
            await pilot.pause()
            idle = time.perf_counter()
            await app.workers.wait_for_complete()  # the whole corpus counted, in the background
            counted = time.perf_counter()
            (shown, _), (settled, cpu) = frames
            what = f"-m {inspect[1]}" if inspect else "training"
            print(f"{what}: imports {T1 - T0:.2f}s, model read {loaded - T1:.2f}s, app {settled - loaded:.2f}s; "
                  f"first frame {shown - T0:.2f}s, first screen {settled - T0:.2f}s after start, "
                  f"{cpu - C0:.2f}s of CPU (idle at {idle - T0:.2f}s, corpus counted at {counted - T0:.2f}s); "
                  f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    asyncio.run(run())
    return 0


app_package.run_app = first_screen  # the command line hands its model and settings here
sys.exit(main(["-m", sys.argv[1]] if len(sys.argv) > 1 else []))
