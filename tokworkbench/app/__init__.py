"""The Textual workbench: panes that render what the core computes."""

from .workbench import WorkbenchApp, run_app

__all__ = ["WorkbenchApp", "run_app"]
