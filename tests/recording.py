"""The workbench app, remembering what it told the user, so tests read no private state."""

from tokworkbench.app import WorkbenchApp


class RecordingApp(WorkbenchApp):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.said: list[str] = []  # every message the app gave
        self.shown: list[str] = []  # those that went on screen (one still showing is not stacked)

    def notify(self, message, **kwargs):
        self.said.append(str(message))
        shown = super().notify(message, **kwargs) is not False
        if shown:
            self.shown.append(str(message))
        return shown
