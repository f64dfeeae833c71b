"""Writing files: save the model (s), export it or its history (e), write a batch (the batch
tab's w). Nothing is overwritten unasked, and nothing the CLI refuses is written."""

from collections.abc import Callable
from pathlib import Path

from tokworkbench.app import messages as msg
from tokworkbench.app.dialogs import ExportDialog, PromptDialog
from tokworkbench.app.dialogs.export import HISTORY, folder_problem
from tokworkbench.app.flows.ui import Folders, Ui
from tokworkbench.app.kind_views import step_noun
from tokworkbench.app.labels import plural
from tokworkbench.core.batching import save_npz
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.session.session import Session


class WriteFlows:
    def __init__(self, ui: Ui, session: Callable[[], Session], folders: Folders, inspecting: Callable[[], bool]):
        """`session`: the screen's session now; `inspecting`: whether it shows a loaded model (-m),
        which has no training history."""
        self.ui = ui
        self.session = session
        self.folders = folders
        self.inspecting = inspecting

    def _steps(self, session: Session) -> str:
        return plural(session.steps, step_noun(session.learner.kind))

    def write_asking(self, path: str, write: Callable[[], None], fmt: str | None = None,
                     title: str = "Not saved") -> None:
        """Refuse what the CLI refuses (an output that is one of the session's inputs, or that
        cannot be written safely: `Session.check_output`), without asking; else write now, or
        after a yes when the file exists: nothing is overwritten unasked."""
        try:
            self.session().check_output(path, fmt)
        except TokWorkbenchError as exc:
            self.ui.notify(str(exc), title=title, severity="error", timeout=10)
            return
        if Path(path).exists():
            self.ui.ask(f"{path} exists. Overwrite it?", "Overwrite", write)
        else:
            write()

    def save(self) -> None:
        session, ui, folders = self.session(), self.ui, self.folders

        def write(path: str) -> None:
            with ui.reporting("Not saved"):
                written = session.save(path)
                folders.last = written.parent.resolve()
                folders.saved_name = written.name  # proposed again next time, in the last folder
                ui.notify(f"saved {self._steps(session)} to {written}")

        def chosen(path: str | None) -> None:
            if path:
                path = str(Path(path.strip()).expanduser())
                self.write_asking(path, lambda: write(path))

        ui.push(PromptDialog("Save model as (tokworkbench JSON)",
                             str(folders.proposed(session) / (folders.saved_name or "model.json")),
                             folder_problem), chosen)

    def export(self) -> None:
        session, ui = self.session(), self.ui

        def chosen(result: tuple[str, str] | None) -> None:
            if not result:
                return
            fmt, path = result
            if fmt == HISTORY and self.inspecting():
                ui.notify("a loaded tokenizer has no training history (no counts); export it as a model instead",
                          title="Not exported", severity="warning")
                return
            with ui.reporting(f"Cannot export to {fmt}"):
                if fmt != HISTORY:
                    session.check_export(fmt)

                def write() -> None:
                    with ui.reporting("Not exported"):
                        if fmt == HISTORY:
                            written = session.export_history(path)
                            notes = [f"wrote {self._steps(session)} to {written}"]
                        else:
                            notes = session.export(fmt, path)
                        self.folders.last = Path(path).parent.resolve()
                        ui.notify("; ".join(notes), title=f"Exported to {fmt}")

                self.write_asking(path, write, None if fmt == HISTORY else fmt, "Not exported")

        ui.push(ExportDialog(self.folders.proposed(session)), chosen)

    def batch(self, message: msg.BatchExport, wrote: Callable[[Path], None]) -> None:
        """Write the batch as .npz through the core (atomic), asking before overwriting;
        `wrote` hears the folder it went to."""
        batch, path = message.batch, message.path

        def write() -> None:
            with self.ui.reporting("Batch not written"):
                save_npz(batch, path)
                self.folders.last = Path(path).parent.resolve()
                wrote(self.folders.last)
                rows, context = batch.inputs.shape
                self.ui.notify(f"wrote a {rows}×{context} batch to {path}", title="Batch written")

        self.write_asking(path, write, title="Batch not written")
