"""Modal dialogs, one a file; each brings its own CSS and answers through `dismiss`."""

from tokworkbench.app.dialogs.confirm import ConfirmDialog
from tokworkbench.app.dialogs.export import ExportDialog
from tokworkbench.app.dialogs.help import HelpDialog
from tokworkbench.app.dialogs.open import OpenDialog
from tokworkbench.app.dialogs.prompt import PromptDialog
from tokworkbench.app.dialogs.replay import ReplayDialog
from tokworkbench.app.dialogs.settings import SettingsDialog

__all__ = ["ConfirmDialog", "ExportDialog", "HelpDialog", "OpenDialog", "PromptDialog", "ReplayDialog", "SettingsDialog"]
