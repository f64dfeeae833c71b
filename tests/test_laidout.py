"""WhenLaidOut: a stale panel in a hidden tab draws once its tab is shown and laid out, and not
while it stays hidden (app/widgets/laidout.py says why Show alone is not enough)."""

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import Static, TabbedContent, TabPane

from tokworkbench.app.widgets.laidout import WhenLaidOut


class Panel(Static):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.draws = 0
        self.laid_out = WhenLaidOut(self, self.draw)

    def draw(self) -> None:
        self.draws += 1


class Tabs(App):
    def compose(self) -> ComposeResult:
        with TabbedContent(initial="a"):
            with TabPane("A", id="a"):
                yield Static("front")
            with TabPane("B", id="b"):
                yield Panel("back", id="panel")


async def until(condition, seconds=30.0):
    async def poll():
        while not condition():
            await asyncio.sleep(0.01)
    await asyncio.wait_for(poll(), seconds)


async def test_a_waiting_panel_draws_once_its_tab_is_laid_out():
    app = Tabs()
    async with app.run_test(size=(60, 12)) as pilot:
        panel = app.query_one(Panel)
        panel.laid_out.wait()
        panel.laid_out.wait()  # a second change while waiting adds no second draw
        app.query_one(Static).update("relaid")  # layouts while the panel stays hidden
        app.screen.refresh(layout=True)
        await pilot.pause()
        await pilot.pause()
        assert panel.draws == 0 and not panel.region.area
        app.query_one(TabbedContent).active = "b"
        await until(lambda: panel.draws == 1)
        assert panel.region.area
        app.screen.refresh(layout=True)  # no longer listening: later layouts draw nothing more
        await pilot.pause()
        await pilot.pause()
        assert panel.draws == 1
