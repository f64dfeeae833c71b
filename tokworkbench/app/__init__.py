"""The Textual workbench: a screen of panes that render what the core's session reports."""

from tokworkbench.app.app import WorkbenchApp, run_app

__all__ = ["WorkbenchApp", "run_app"]
