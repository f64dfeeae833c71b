"""The main screen's dialog flows: each asks in a dialog, then calls one session verb (save,
export, replay, open, settings, target, reset, compare), asking again before anything would be
overwritten or discarded.

A mixin of MainScreen rather than a screen of its own: the flows share the screen's session,
its error reporting and its snapshot, and their keys are the screen's bindings.
"""

from collections.abc import Callable
from pathlib import Path

from textual.widgets import TabbedContent

from tokworkbench.core.batching import save_npz
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.registry.load import open_model
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.text.samples import sample_paths
from tokworkbench.app import messages as msg
from tokworkbench.app.dialogs import ConfirmDialog, ExportDialog, OpenDialog, PromptDialog, ReplayDialog, SettingsDialog
from tokworkbench.app.dialogs.export import HISTORY, folder_problem
from tokworkbench.app.labels import describe_settings, plural, step_noun
from tokworkbench.app.widgets.batches import BatchesPanel
from tokworkbench.app.widgets.compare import ComparePanel


class FileFlows:
    """Needs from the screen: `session`, `snapshot`, `kind`, `inspect`, `last_folder`, `last_saved_name`,
    `reporting`, `refresh_snapshot` and `start_load`."""

    def on_batch_export(self, message: msg.BatchExport) -> None:
        """Write the batch as .npz through the core (atomic), asking before overwriting."""
        batch, path = message.batch, message.path

        def write() -> None:
            with self.reporting("Batch not written"):
                save_npz(batch, path)
                self.last_folder = Path(path).parent.resolve()
                self.query_one(BatchesPanel).folder = self.last_folder
                rows, context = batch.inputs.shape
                self.notify(f"wrote a {rows}×{context} batch to {path}", title="Batch written")

        self._write_asking(path, write, title="Batch not written")

    def action_compare(self) -> None:
        def chosen(result: tuple[str, str | None] | None) -> None:
            if not result:
                return
            path, split = result
            with self.reporting("Cannot compare"):
                self.query_one(ComparePanel).set_other(open_model(path, split), Path(path).name)
                self.query_one("#bottom", TabbedContent).active = "tab-compare"

        self.app.push_screen(ReplayDialog("Tokenizer to compare with this one: a tokworkbench model (BPE or "
                                          "fixed vocabulary), HF tokenizer.json, minbpe .model, .tiktoken, or a preset "
                                          "(cl100k_base, o200k_base, gpt2)"),
                             chosen)

    def ask(self, question: str, yes: str, then: Callable[[], None]) -> None:
        self.app.push_screen(ConfirmDialog(question, yes), lambda answer: then() if answer else None)

    def _write_asking(self, path: str, write: Callable[[], None], fmt: str | None = None,
                      title: str = "Not saved") -> None:
        """Refuse what the CLI refuses (an output that is one of the session's inputs, or that
        cannot be written safely: `Session.check_output`), without asking; else write now, or
        after a yes when the file exists: nothing is overwritten unasked."""
        try:
            self.session.check_output(path, fmt)
        except TokWorkbenchError as exc:
            self.notify(str(exc), title=title, severity="error", timeout=10)
            return
        if Path(path).exists():
            self.ask(f"{path} exists. Overwrite it?", "Overwrite", write)
        else:
            write()

    def action_reset(self) -> None:
        def reset() -> None:
            self.session.undo_all()
            self.refresh_snapshot()

        self.ask(f"Undo all {plural(self.session.steps, step_noun(self.kind))}?", "Reset", reset)

    def action_set_target(self) -> None:
        session = self.session

        def validate(value: str) -> str | None:
            try:
                session.learner.steps_for_vocab(int(value))
            except ValueError:
                return "a whole number, please"
            except TokWorkbenchError as exc:
                return str(exc)
            return None

        def done(value: str | None) -> None:
            if value is not None:
                with self.reporting("Target not changed"):
                    session.set_target(int(value))
                    self.app.sub_title = describe_settings(session.settings)
                    self.refresh_snapshot()
                    vocab = self.snapshot.vocab_size
                    if session.steps_to_target() == 0 and vocab != int(value):  # say so now, not at r
                        back = "; u or R goes back below it" if vocab > int(value) and self.kind == "bpe" else ""
                        self.notify(f"the vocabulary is already {vocab:,} for a target of {int(value):,}: "
                                    f"r has nothing to do{back}", timeout=6)

        self.app.push_screen(PromptDialog("Target vocabulary size (base + merges + specials)",
                                          str(session.settings.target), validate,
                                          f"now {self.snapshot.vocab_size:,}; base {self.snapshot.base_size}"), done)

    def action_settings(self) -> None:
        session = self.session

        def done(new: Settings | None) -> None:
            if new is None or new == session.settings:
                return
            if not session.settings.needs_retrain(new):
                with self.reporting("Settings not changed"):
                    session.set_target(new.target)
                    session.set_roles(new.roles)
                    self.app.sub_title = describe_settings(new)
                    self.refresh_snapshot()
                return
            restart = lambda: self.start_load(None, session, new)  # noqa: E731
            if session.steps:
                self.ask(f"Restart training with the new settings? {plural(session.steps, step_noun(self.kind))} "
                         "will be discarded.", "Restart", restart)
            else:
                restart()

        self.app.push_screen(SettingsDialog(session.settings, session.stats.distinct_chars), done)

    def action_open(self) -> None:
        def done(paths: list[str] | None) -> None:
            if not paths:
                return
            go = lambda: self.start_load(paths, None, self.session.settings)  # noqa: E731
            if self.session.unsaved:
                self.ask("Open another corpus? The trained model is not saved.", "Open", go)
            else:
                go()

        self.app.push_screen(OpenDialog(self._default_folder()), done)

    def proposed_folder(self) -> Path:
        """Where files are proposed (the app saves screenshots there too)."""
        return self._default_folder()

    def _default_folder(self) -> Path:
        """Where files are proposed: the last folder written to, else the corpus's own folder
        (unless it is the embedded sample), else the working directory."""
        if self.last_folder is not None:
            return self.last_folder
        first = Path(self.session.corpus.documents[0].name) if self.session and self.session.corpus.documents else None
        if first is not None and first.parent != sample_paths()[0].parent and first.parent.is_dir():
            return first.parent.resolve()
        return Path.cwd()

    def action_save(self) -> None:
        session = self.session

        def write(path: str) -> None:
            with self.reporting("Not saved"):
                written = session.save(path)
                self.last_folder = written.parent.resolve()
                self.last_saved_name = written.name  # proposed again next time, in the last folder
                self.notify(f"saved {plural(session.steps, step_noun(self.kind))} to {written}")

        def chosen(path: str | None) -> None:
            if path:
                path = str(Path(path.strip()).expanduser())
                self._write_asking(path, lambda: write(path))

        self.app.push_screen(PromptDialog("Save model as (tokworkbench JSON)",
                                          str(self._default_folder() / (self.last_saved_name or "model.json")),
                                          folder_problem), chosen)

    def action_export(self) -> None:
        session = self.session

        def chosen(result: tuple[str, str] | None) -> None:
            if not result:
                return
            fmt, path = result
            if fmt == HISTORY and self.inspect is not None:
                self.notify("a loaded tokenizer has no training history (no counts); export it as a model instead",
                            title="Not exported", severity="warning")
                return
            with self.reporting(f"Cannot export to {fmt}"):
                if fmt != HISTORY:
                    session.check_export(fmt)

                def write() -> None:
                    with self.reporting("Not exported"):
                        if fmt == HISTORY:
                            written = session.export_history(path)
                            notes = [f"wrote {plural(session.steps, step_noun(self.kind))} to {written}"]
                        else:
                            notes = session.export(fmt, path)
                        self.last_folder = Path(path).parent.resolve()
                        self.notify("; ".join(notes), title=f"Exported to {fmt}")

                self._write_asking(path, write, None if fmt == HISTORY else fmt, "Not exported")

        self.app.push_screen(ExportDialog(self._default_folder()), chosen)

    def action_replay(self) -> None:
        session = self.session

        def chosen(result: tuple[str, str | None] | None) -> None:
            if not result:
                return
            path, split = result
            with self.reporting("Cannot replay"):
                model = open_model(path, split)

                def go() -> None:
                    with self.reporting("Cannot replay"):
                        session.replay(model, path)
                        self.notify(f"replaying {plural(len(model.merges), 'merge')} from {path}: "
                                    "n steps through them, r runs to their end")
                        self.refresh_snapshot()

                if session.steps:
                    self.ask(f"Undo the {plural(session.steps, 'merge')} made here and replay {path}?", "Replay", go)
                else:
                    go()

        self.app.push_screen(ReplayDialog(), chosen)

    def action_quit_app(self) -> None:
        if self.session is not None and self.session.unsaved:
            self.ask("Quit without saving the trained model?", "Quit", self.app.exit)
        else:
            self.app.exit()
