"""Units, normalizer, pre-tokenizer, tie-break, target, special tokens and their roles, checked by
the core before closing. Roles change no training: they only say which special token opens a
document (bos), closes it (eos), pads a batch row (pad) or stands for unknown text (unk)."""

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Select

from ...core.bpe.tiebreak import TIE_BREAK_RULES, TIE_BREAKS
from ...core.errors import TokWorkbenchError
from ...core.models.roles import ROLES, Roles
from ...core.settings import CUSTOM, Settings
from ...core.text.normalize import NORMALIZERS
from ...core.text.pretokenize import PRESETS
from ...core.units import Units
from ..labels import train_command
from .base import Dialog
from ..widgets.steady_input import SteadyInput

UNIT_CHOICES = {Units.BYTE: "byte (256 base ids)", Units.CHAR: "char (corpus characters)"}


class SettingsDialog(Dialog):
    DEFAULT_CSS = """
    SettingsDialog .dialog {
        width: 90;
    }
    SettingsDialog #settings-body {
        height: auto;
        max-height: 50vh;  /* leaves the title, the error line and the buttons on an 80x24 screen */
    }
    SettingsDialog #tie-break-rule {
        margin-top: 1;
    }
    SettingsDialog #settings-grid {
        grid-size: 2;
        grid-columns: 16 1fr;
        grid-rows: 3;
        height: auto;
    }
    SettingsDialog #settings-grid Label {
        padding-top: 1;
    }
    SettingsDialog #roles Input {
        width: 1fr;
    }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("ctrl+s", "apply", "Apply")]

    def __init__(self, settings: Settings):
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        with Vertical(classes="dialog"):
            yield Label("Training settings — changing any but the target or the roles restarts training",
                        classes="question")
            with VerticalScroll(id="settings-body"):
                with Grid(id="settings-grid"):
                    yield Label("units")
                    yield Select([(label, u.value) for u, label in UNIT_CHOICES.items()],
                                 value=s.units.value, allow_blank=False, id="units")
                    yield Label("normalizer")
                    yield Select([(n, n) for n in NORMALIZERS], value=s.normalizer, allow_blank=False, id="normalizer")
                    yield Label("pre-tokenizer")
                    yield Select([(n, n) for n in (*PRESETS, CUSTOM)], value=s.split, allow_blank=False, id="split")
                    yield Label("custom regex")
                    yield SteadyInput(s.pattern or "", placeholder=r"e.g. \w+|\s+|[^\w\s]+", id="pattern")
                    yield Label("tie-break")
                    yield Select([(t, t) for t in TIE_BREAKS], value=s.tie_break, allow_blank=False, id="tie_break")
                    yield Label("target vocab")
                    yield SteadyInput(str(s.target), id="target", type="integer")
                    yield Label("special tokens")
                    yield SteadyInput(" ".join(s.special_tokens), placeholder="space-separated, e.g. <s> </s> <pad>",
                                      id="special_tokens")
                    yield Label("bos eos pad unk")
                    with Horizontal(id="roles"):
                        for role in ROLES:
                            yield SteadyInput(getattr(s.roles, role) or "", placeholder=role, id=f"role-{role}")
                yield Label("a role names one of the special tokens; roles change no training", classes="hint")
                yield Label(TIE_BREAK_RULES[s.tie_break], id="tie-break-rule", classes="hint")
                yield Label(f"same from the command line: {train_command(s)}", id="train-command", classes="hint")
            yield Label("", id="settings-error", classes="hint")
            with Horizontal(classes="buttons"):
                yield Button("Apply (ctrl+s)", variant="primary", id="apply")
                yield Button("Cancel (esc)", id="cancel")

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "tie_break":
            self.query_one("#tie-break-rule", Label).update(TIE_BREAK_RULES[event.value])

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        else:
            self.dismiss(None)

    def action_apply(self) -> None:
        split = self.query_one("#split", Select).value
        pattern = self.query_one("#pattern", Input).value or None
        try:
            target = int(self.query_one("#target", Input).value)
        except ValueError:
            return self.show_error("#settings-error", "target vocabulary must be a whole number")
        if split == CUSTOM and not pattern:
            return self.show_error("#settings-error", "a custom pre-tokenizer needs a regex")
        specials = tuple(self.query_one("#special_tokens", Input).value.split())
        try:
            roles = Roles(**{r: self.query_one(f"#role-{r}", Input).value.strip() or None for r in ROLES})
        except TokWorkbenchError as exc:
            return self.show_error("#settings-error", str(exc))
        settings = self.settings.with_(
            special_tokens=specials,
            roles=roles,
            units=Units(self.query_one("#units", Select).value),
            normalizer=self.query_one("#normalizer", Select).value,
            split=split,
            pattern=pattern if split == CUSTOM else None,
            tie_break=self.query_one("#tie_break", Select).value,
            target=target,
        )
        try:
            settings.config()
        except TokWorkbenchError as exc:
            return self.show_error("#settings-error", str(exc))
        self.dismiss(settings)
