"""Model kind, units, normalizer, pre-tokenizer, tie-break, the Unigram options, spm_train's
piece options (SentencePiece BPE, Unigram em), the target,
special tokens and their roles, checked by the core before closing. Roles change no training:
they only say which special token opens a document (bos), closes it (eos), pads a batch row
(pad) or stands for unknown text (unk)."""

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Select

from tokworkbench.app.dialogs.base import Dialog
from tokworkbench.app.kind_views import view_of
from tokworkbench.app.labels import train_command
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.bpe.tiebreak import TIE_BREAK_RULES, TIE_BREAKS
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.models.kind import Kind
from tokworkbench.core.models.roles import ROLES, Roles
from tokworkbench.core.registry.kinds import KINDS, TRAINABLE, kind_named
from tokworkbench.core.session.settings import CUSTOM, FIT, Settings
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.text.patterns import PRESETS
from tokworkbench.core.units import Units

UNIT_CHOICES = {Units.BYTE: "byte (256 base ids)", Units.CHAR: "char (corpus characters)"}
ALGORITHM_CHOICES = {"course": "course (the HF course's, exactly; start cost 1)",
                     "em": "em (SentencePiece's: EM, then pruning)"}
SP_FIELDS = ("split_digits", "user_defined_symbols", "control_symbols", "required_chars")  # spm_train's
KIND_FIELDS = ("units", "tie_break", "algorithm", "seed_size", "prune_fraction", "shrinking_factor",
               "character_coverage", "byte_fallback", *SP_FIELDS)
"""The fields that only some kinds read (`Kind.options`): the others' are disabled."""
COURSE_COVERAGE = Settings().character_coverage  # the default, which course reads as every character
FOR_ALGORITHM = {"prune_fraction": "course", "shrinking_factor": "em",  # each algorithm's pruning option
                 # UnigramConfig refuses spm_train's options under course
                 **dict.fromkeys(("character_coverage", "byte_fallback", *SP_FIELDS), "em")}
"""The algorithm a field needs, in a kind that has the algorithm option (the others have one way to train)."""


def editable(name: str, kind: Kind, algorithm: str) -> bool:
    """Whether `kind` under `algorithm` reads the field `name`."""
    return name in kind.options and ("algorithm" not in kind.options
                                     or FOR_ALGORITHM.get(name, algorithm) == algorithm)


def symbols_of(text: str) -> tuple[str, ...]:
    """spm_train's comma-separated list, as `--control-symbols` reads it (spaces around the commas
    dropped); an empty item is left to the config to refuse."""
    return tuple(item.strip() for item in text.split(",")) if text.strip() else ()


def kind_choices() -> list[tuple[str, str]]:
    """The model field's choices: the trainable kinds, in the words of the app's table."""
    return [(view_of(name).choice or KINDS[name].title, name) for name in TRAINABLE]

class FieldSelect(Select):
    """A settings choice whose enter applies the dialog, as ctrl+s does (the dialog opens on the
    first of them); space and the arrows still open its list, and enter in the open list still picks."""

    BINDINGS = [Binding("enter", "screen.apply", "Apply", show=False)]


class SettingsDialog(Dialog):
    DEFAULT_CSS = """
    SettingsDialog .dialog {
        width: 90;
    }
    SettingsDialog #settings-body {
        height: auto;
        max-height: 50vh;  /* leaves the title, the error line and the buttons on an 80x24 screen */
    }
    SettingsDialog.-tall #settings-body {
        max-height: 70vh;  /* 40 lines or more: more fields in view; the buttons still show at 40 */
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
    AUTO_FOCUS = "#model"  # not the scrolling body, which shows no focus and answers no enter

    def __init__(self, settings: Settings, chars: int | None = None):
        """`chars`: the corpus's distinct characters, which a Unigram seed must all hold."""
        super().__init__()
        self.settings = settings
        self.chars = chars
        self._kind = settings.kind
        """The kind the fields were last set for: a change from it proposes the new kind's usual fields."""

    def compose(self) -> ComposeResult:
        s = self.settings
        with Vertical(classes="dialog"):
            yield Label("Training settings — changing any but the target or the roles restarts training",
                        classes="question")
            with VerticalScroll(id="settings-body"):
                with Grid(id="settings-grid"):
                    yield Label("model")
                    yield FieldSelect(kind_choices(), value=s.kind,
                                 allow_blank=False, id="model")
                    yield Label("units")
                    yield FieldSelect([(label, u.value) for u, label in UNIT_CHOICES.items()],
                                 value=s.units.value, allow_blank=False, id="units")
                    yield Label("normalizer")
                    yield FieldSelect([(n, n) for n in NORMALIZERS], value=s.normalizer, allow_blank=False,
                                      id="normalizer")
                    yield Label("pre-tokenizer")
                    yield FieldSelect([(n, n) for n in (*PRESETS, CUSTOM)], value=s.split, allow_blank=False,
                                      id="split")
                    yield Label("custom regex")
                    yield SteadyInput(s.pattern or "", placeholder=r"e.g. \w+|\s+|[^\w\s]+", id="pattern")
                    yield Label("tie-break")
                    yield FieldSelect([(t, t) for t in TIE_BREAKS], value=s.tie_break, allow_blank=False,
                                      id="tie_break")
                    yield Label("algorithm")
                    yield FieldSelect([(label, a) for a, label in ALGORITHM_CHOICES.items()],
                                 value=s.algorithm, allow_blank=False, id="algorithm")
                    yield Label("seed size")
                    yield SteadyInput(str(s.seed_size), id="seed_size", type="integer")
                    yield Label("prune fraction")
                    yield SteadyInput(f"{s.prune_fraction:g}", id="prune_fraction", type="number")
                    yield Label("em keeps")
                    yield SteadyInput(f"{s.shrinking_factor:g}", id="shrinking_factor", type="number")
                    yield Label("char coverage")
                    yield SteadyInput(f"{s.character_coverage:g}", id="character_coverage", type="number")
                    yield Label("byte fallback")
                    yield FieldSelect([("no: unknown characters become <unk>", "no"),
                                       ("yes: their UTF-8 bytes (<0x00>..<0xFF>)", "yes")],
                                      value="yes" if s.byte_fallback else "no", allow_blank=False, id="byte_fallback")
                    yield Label("split digits")
                    yield FieldSelect([("no: a piece may hold digits with other characters", "no"),
                                       ("yes: numbers are read digit by digit", "yes")],
                                      value="yes" if s.split_digits else "no", allow_blank=False, id="split_digits")
                    yield Label("user symbols")
                    yield SteadyInput(",".join(s.user_defined_symbols), id="user_defined_symbols",
                                      placeholder="comma-separated, always whole pieces, e.g. <sep>,<cls>")
                    yield Label("control symbols")
                    yield SteadyInput(",".join(s.control_symbols), id="control_symbols",
                                      placeholder="comma-separated, never from text, e.g. <mask>")
                    yield Label("required chars")
                    yield SteadyInput(s.required_chars, id="required_chars",
                                      placeholder="kept whatever the coverage, e.g. 0123456789")
                    yield Label("target vocab")
                    yield SteadyInput(str(s.target), id="target", type="integer")
                    yield Label("special tokens")
                    yield SteadyInput(" ".join(s.special_tokens), placeholder="space-separated, e.g. <s> </s> <pad>",
                                      id="special_tokens")
                    yield Label("bos eos pad unk")
                    with Horizontal(id="roles"):
                        for role in ROLES:
                            yield SteadyInput(getattr(s.roles, role) or "", placeholder=role, id=f"role-{role}")
                yield Label("a role names one of the special tokens (Unigram's <unk> too); roles change no training",
                            classes="hint")
                yield Label(TIE_BREAK_RULES[s.tie_break], id="tie-break-rule", classes="hint")
                if self.chars:
                    yield Label(f"Unigram course keeps every character (em: those its character coverage keeps): "
                                f"this corpus has {self.chars:,}, so the seed size and the target vocabulary must "
                                "hold them.", id="unigram-hint", classes="hint")
                yield Label(Text(f"same from the command line: {train_command(s)}"), id="train-command", classes="hint")
            yield Label("", id="settings-error", classes="hint")
            with Horizontal(classes="buttons"):
                yield Button("Apply (ctrl+s)", variant="primary", id="apply")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self._enable()
        self.set_class(self.app.size.height >= 40, "-tall")

    def on_resize(self, event) -> None:
        self.set_class(event.size.height >= 40, "-tall")

    def _enable(self) -> None:
        """Only the options of the chosen kind and algorithm can be edited (Unigram works on
        characters; course prunes a fraction, em keeps one and alone takes spm_train's options)."""
        kind = kind_named(self.query_one("#model", Select).value)
        algorithm = self.query_one("#algorithm", Select).value
        for name in KIND_FIELDS:
            self.query_one(f"#{name}").disabled = not editable(name, kind, algorithm)
        # a hint about a field the kind does not read is noise: SentencePiece BPE breaks no ties
        self.query_one("#tie-break-rule").display = editable("tie_break", kind, algorithm)
        for hint in self.query("#unigram-hint"):  # the seed must hold every character
            hint.display = editable("seed_size", kind, algorithm)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "tie_break":
            self.query_one("#tie-break-rule", Label).update(TIE_BREAK_RULES[event.value])
        elif event.select.id == "algorithm":
            self._enable()
        elif event.select.id == "model":
            self._enable()
            if event.value != self._kind:  # a change, not the value the dialog opened on
                self._kind = event.value
                kind = kind_named(event.value)  # its usual units and split: Unigram on bytes and gpt4
                self.query_one("#units", Select).value = kind.default_units  # learns whitespace runs
                self.query_one("#split", Select).value = kind.default_split  # at Δloss 0
                boxes = {role: self.query_one(f"#role-{role}", Input) for role in ROLES}
                if kind.default_roles and not any(box.value.strip() for box in boxes.values()):
                    for role, token in kind.default_roles:  # SentencePiece's own: <unk>, <s>, </s>
                        boxes[role].value = token
            seed, target = self.query_one("#seed_size", Input), self.query_one("#target", Input)
            if self.chars and seed.value.isdigit() and target.value.isdigit():  # a kind without fit keeps them
                fitted = Settings(kind=event.value, seed_size=int(seed.value), target=int(target.value)).fitted(
                    self.chars, FIT)  # the command line's rule: room for substrings beside the characters
                seed.value, target.value = str(fitted.seed_size), str(fitted.target)
        self._show_command()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._show_command()

    def _show_command(self) -> None:
        """The command line follows every field; while a field is not yet a value (a target being
        retyped) it keeps the last command the fields made."""
        settings = self._gathered()
        if not isinstance(settings, str):
            line = f"same from the command line: {train_command(settings)}"
            self.query_one("#train-command", Label).update(Text(line))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        else:
            self.dismiss(None)

    def action_apply(self) -> None:
        settings = self._gathered()
        if isinstance(settings, str):
            return self.show_error("#settings-error", settings)
        try:
            settings.config()
        except TokWorkbenchError as exc:
            return self.show_error("#settings-error", str(exc))
        self.dismiss(settings)

    def _gathered(self) -> "Settings | str":
        """The settings the fields say, or what is wrong with them."""
        split = self.query_one("#split", Select).value
        pattern = self.query_one("#pattern", Input).value or None
        try:
            target = int(self.query_one("#target", Input).value)
        except ValueError:
            return "target vocabulary must be a whole number"
        if split == CUSTOM and not pattern:
            return "a custom pre-tokenizer needs a regex"
        specials = tuple(self.query_one("#special_tokens", Input).value.split())
        try:
            roles = Roles(**{r: self.query_one(f"#role-{r}", Input).value.strip() or None for r in ROLES})
        except TokWorkbenchError as exc:
            return str(exc)
        kind = kind_named(self.query_one("#model", Select).value)
        changes: dict = {"kind": kind.name}
        algorithm = self.query_one("#algorithm", Select).value
        if editable("character_coverage", kind, algorithm):
            try:
                changes["character_coverage"] = float(self.query_one("#character_coverage", Input).value)
            except ValueError:
                return "character coverage must be a number, e.g. 0.9995"
            changes["byte_fallback"] = self.query_one("#byte_fallback", Select).value == "yes"
        elif "character_coverage" in kind.options:  # Unigram course keeps every character, spelt as it is:
            kept = self.settings.character_coverage  # what course reads as that stays (no restart)
            changes.update(character_coverage=kept if kept in (1.0, COURSE_COVERAGE) else COURSE_COVERAGE,
                           byte_fallback=False)
        if editable("split_digits", kind, algorithm):
            changes.update(split_digits=self.query_one("#split_digits", Select).value == "yes",
                           user_defined_symbols=symbols_of(self.query_one("#user_defined_symbols", Input).value),
                           control_symbols=symbols_of(self.query_one("#control_symbols", Input).value),
                           required_chars=self.query_one("#required_chars", Input).value.strip())
        elif "split_digits" in kind.options:  # Unigram course: spm_train's options are em's alone
            changes.update(split_digits=False, user_defined_symbols=(), control_symbols=(), required_chars="")
        if "seed_size" in kind.options + kind_named(self.settings.kind).options:  # the fields of
            try:  # the kind chosen, or of the kind left (back to its values)
                seed_size = int(self.query_one("#seed_size", Input).value)
            except ValueError:
                return "seed size must be a whole number"
            fractions = {}
            for name, field, example in (("prune fraction", "prune_fraction", "0.1"),
                                         ("em keeps", "shrinking_factor", "0.75")):
                try:
                    fractions[field] = float(self.query_one(f"#{field}", Input).value)
                except ValueError:
                    return f"{name} must be a number, e.g. {example}"
                if not 0 < fractions[field] < 1:
                    return f"{name} must be between 0 and 1, e.g. {example}"
            changes.update(algorithm=algorithm, seed_size=seed_size, **fractions)
        return self.settings.with_(
            units=Units(self.query_one("#units", Select).value if "units" in kind.options else kind.default_units),
            normalizer=self.query_one("#normalizer", Select).value,
            split=split,
            pattern=pattern if split == CUSTOM else None,
            tie_break=self.query_one("#tie_break", Select).value,
            target=target,
            special_tokens=specials,
            roles=roles,
            **changes,
        )
