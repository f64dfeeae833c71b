"""Seconds from Python start to the first screen of `tokworkbench -m NAME` on the sample texts
(headless, 160×48), through the command line's own path: its imports, reading the model, the app
until the corpus pane draws tokens. Run it once per case, so each starts cold:

    python benchmarks/inspect_startup.py cl100k_base
    python benchmarks/inspect_startup.py            # the training workbench, for comparison

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

import tokworkbench.app as app_package  # noqa: E402
from tokworkbench.cli import main  # noqa: E402

T1 = time.perf_counter()


def first_screen(paths, settings, inspect=None) -> int:
    loaded = time.perf_counter()

    async def run():
        app = app_package.WorkbenchApp(paths, settings, inspect)
        async with app.run_test(size=(160, 48)) as pilot:
            while app.main.snapshot is None or not app.main.snapshot.window.spans:
                await asyncio.sleep(0.005)
            await pilot.pause()  # the frame with the tokens drawn
            shown, cpu = time.perf_counter(), time.process_time()
            await app.workers.wait_for_complete()  # the whole corpus counted, in the background
            counted = time.perf_counter()
            what = f"-m {inspect[1]}" if inspect else "training"
            print(f"{what}: imports {T1 - T0:.2f}s, model read {loaded - T1:.2f}s, app {shown - loaded:.2f}s; "
                  f"first screen {shown - T0:.2f}s after start, {cpu - C0:.2f}s of CPU "
                  f"(corpus counted at {counted - T0:.2f}s); load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    asyncio.run(run())
    return 0


app_package.run_app = first_screen  # the command line hands its model and settings here
sys.exit(main(["-m", sys.argv[1]] if len(sys.argv) > 1 else []))
