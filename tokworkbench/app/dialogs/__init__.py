"""Modal dialogs, one a file; each brings its own CSS and answers through `dismiss`."""

from .confirm import ConfirmDialog
from .export import ExportDialog
from .help import HelpDialog
from .open import OpenDialog
from .prompt import PromptDialog
from .replay import ReplayDialog
from .settings import SettingsDialog

__all__ = ["ConfirmDialog", "ExportDialog", "HelpDialog", "OpenDialog", "PromptDialog", "ReplayDialog", "SettingsDialog"]
