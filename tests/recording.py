"""The workbench app, remembering what it told the user, so tests read no private state."""

from tokworkbench.app import WorkbenchApp


class RecordingApp(WorkbenchApp):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.said: list[str] = []

    def notify(self, message, **kwargs):
        self.said.append(str(message))
        super().notify(message, **kwargs)
