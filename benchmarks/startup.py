"""Seconds from Python start to the first screen with the sample corpus drawn (headless).

    python benchmarks/startup.py
"""
import time  # noqa: E402

T0 = time.perf_counter()
import asyncio

from tokworkbench.app import WorkbenchApp

T1 = time.perf_counter()
async def main():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        while app.main.snapshot is None or not app.main.snapshot.window.spans:
            await asyncio.sleep(0.005)
        await pilot.pause()
        print(f"imports {T1-T0:.2f}s, first screen with the corpus drawn {time.perf_counter()-T0:.2f}s after start")
asyncio.run(main())
