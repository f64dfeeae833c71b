"""The workbench's dialog-driven actions: reset, target, settings, open, save, export, replay, quit.

A mixin of WorkbenchApp, kept apart so the app module holds layout, rendering and training.
Each action asks through a modal screen, checks with the core, and changes nothing on a refusal.
"""

from pathlib import Path

from ..core.formats import modelfile
from ..core.errors import TokWorkbenchError, TrainingError
from ..core.formats.export import check, export
from ..core.formats.load import load_any
from ..core.session import Settings
from .screens import ConfirmScreen, ExportScreen, OpenScreen, PromptScreen, SettingsScreen


class DialogActions:
    def _confirm_overwrite(self, path: str, write) -> None:
        """Write now, or after a yes when the file exists: nothing is overwritten unasked."""
        if Path(path).exists():
            self.push_screen(ConfirmScreen(f"{path} exists. Overwrite it?", "Overwrite"),
                             lambda yes: write() if yes else None)
        else:
            write()

    def action_reset(self) -> None:
        def reset(yes: bool | None) -> None:
            if yes:
                with self.lock:
                    while self.trainer.undo() is not None:
                        pass
                self._after_change()

        if self.trainer.history:
            self.push_screen(ConfirmScreen(f"Undo all {len(self.trainer.history):,} merges?", "Reset"), reset)

    def action_set_target(self) -> None:
        def validate(value: str) -> str | None:
            try:
                self.trainer.merges_for_vocab(int(value))
            except ValueError:
                return "a whole number, please"
            except TokWorkbenchError as exc:
                return str(exc)
            return None

        def done(value: str | None) -> None:
            if value is not None:
                self.settings = self.settings.with_(target=int(value))
                self.sub_title = self.settings.describe()
                self.refresh_from_core()

        self.push_screen(PromptScreen("Target vocabulary size (base + merges + specials)", str(self.settings.target),
                                      validate, f"now {self.trainer.vocab_size:,}; base {self.trainer.base_size}"), done)

    def action_settings(self) -> None:
        def done(new: Settings | None) -> None:
            if new is None or new == self.settings:
                return
            if not self.settings.needs_retrain(new):
                self.settings = new
                self.sub_title = new.describe()
                self.refresh_from_core()
                return

            def restart(yes: bool | None) -> None:
                if yes:
                    self.start_load(None, self.corpus, new)

            if self.trainer.history:
                self.push_screen(ConfirmScreen(
                    f"Restart training with the new settings? {len(self.trainer.history):,} merges will be discarded.",
                    "Restart"), restart)
            else:
                restart(True)

        self.push_screen(SettingsScreen(self.settings), done)

    def action_open(self) -> None:
        def done(paths: list[str] | None) -> None:
            if not paths:
                return

            def go(yes: bool | None) -> None:
                if yes:
                    self.start_load(paths, None, self.settings)

            if self._unsaved():
                self.push_screen(ConfirmScreen("Open another corpus? The trained model is not saved.", "Open"), go)
            else:
                go(True)

        self.push_screen(OpenScreen(), done)

    def action_save(self) -> None:
        def write(path: str) -> None:
            with self.lock:
                tok = self.trainer.tokenizer()
                corpus = self.trainer.corpus_summary()
            try:
                modelfile.save(tok, path, corpus)
            except TokWorkbenchError as exc:
                self.notify(str(exc), title="Not saved", severity="error")
                return
            self.saved_merges = tok.merges
            self.notify(f"saved {len(tok.merges):,} merges to {path}")

        def chosen(path: str | None) -> None:
            if not path:
                return
            self._confirm_overwrite(path, lambda: write(path))

        def validate(value: str) -> str | None:
            if not value.strip():
                return "name a file"
            parent = Path(value).expanduser().parent
            return None if parent.is_dir() else f"folder {parent} does not exist"

        self.push_screen(PromptScreen("Save model as (tokworkbench JSON)", "model.json", validate), chosen)

    def action_export(self) -> None:
        def chosen(result: tuple[str, str] | None) -> None:
            if not result:
                return
            fmt, path = result
            with self.lock:
                tok = self.trainer.tokenizer()
            try:
                check(tok, fmt)
            except TokWorkbenchError as exc:
                self.notify(str(exc), title=f"Cannot export to {fmt}", severity="error", timeout=10)
                return

            def write() -> None:
                try:
                    notes = export(tok, fmt, path)
                except TokWorkbenchError as exc:
                    self.notify(str(exc), title="Not exported", severity="error")
                    return
                self.notify("; ".join(notes), title=f"Exported to {fmt}")

            self._confirm_overwrite(path, write)

        self.push_screen(ExportScreen(), chosen)

    def action_replay(self) -> None:
        def chosen(value: str | None) -> None:
            if not value:
                return
            path, _, split = value.partition("  ")
            try:
                tok = load_any(path.strip(), split.strip() or None)
                if tok.units != "byte" or self.settings.units != "byte":
                    raise TrainingError("replay works with byte-level tokenizers on byte units")
            except TokWorkbenchError as exc:
                self.notify(str(exc), title="Cannot replay", severity="error", timeout=10)
                return

            def go(yes: bool | None) -> None:
                if not yes:
                    return
                with self.lock:
                    while self.trainer.undo() is not None:
                        pass
                    self.trainer.replay(list(tok.merges))
                self.notify(f"replaying {len(tok.merges):,} merges from {path}: n steps through them, r runs")
                self._after_change()

            if self.trainer.history:
                self.push_screen(ConfirmScreen(
                    f"Undo the {len(self.trainer.history):,} merges made here and replay {path}?", "Replay"), go)
            else:
                go(True)

        self.push_screen(PromptScreen(
            "Tokenizer to replay: a tokworkbench model, HF tokenizer.json, minbpe .model or .tiktoken",
            "", hint="for a bare .tiktoken file add two spaces and a pattern: model.tiktoken  gpt4"), chosen)

    def _unsaved(self) -> bool:
        return bool(self.trainer and self.trainer.merges and tuple(self.trainer.merges) != self.saved_merges)

    def action_quit_app(self) -> None:
        if self._unsaved():
            self.push_screen(ConfirmScreen("Quit without saving the trained model?", "Quit"),
                             lambda yes: self.exit() if yes else None)
        else:
            self.exit()
