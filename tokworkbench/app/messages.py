"""Messages that carry results up: from workers (thread-safe) and from panes to the screen."""

import threading
from dataclasses import dataclass

from textual.message import Message

from tokworkbench.core.inspection.vocab import TokenCounts
from tokworkbench.core.session.session import RunFinished, RunProgress, Session
from tokworkbench.core.session.snapshot import Snapshot


@dataclass
class TrainProgress(Message):
    progress: RunProgress

    def can_replace(self, message: Message) -> bool:
        """Only the newest snapshot matters: a waiting older one is dropped, so keys never queue."""
        return isinstance(message, TrainProgress)


@dataclass
class TrainStopped(Message):
    """The training child has stopped (its state is on its way back): what it made, and the
    view of where it stopped."""

    finished: RunFinished
    snapshot: Snapshot
    painted: threading.Event | None = None  # set once the screen shows it


@dataclass
class TrainFinished(Message):
    finished: RunFinished
    snapshot: Snapshot


@dataclass
class LoadProgress(Message):
    done: int
    total: int
    what: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


@dataclass
class SessionReady(Message):
    session: Session


@dataclass
class LoadFailed(Message):
    error: str


@dataclass
class PairSelected(Message):
    pair: tuple[int, int] | None


@dataclass
class PairFilterChanged(Message):
    query: str


@dataclass
class DocumentSelected(Message):
    index: int


@dataclass
class EncodeChanged(Message):
    text: str


@dataclass
class RewindTo(Message):
    step: int  # undo until this is the last step


@dataclass
class HistoryWanted(Message):
    """The history table scrolled to rows it does not hold: the screen reads rows start:end."""

    start: int
    end: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, HistoryWanted)  # only where it is now matters


@dataclass
class BatchExport(Message):
    """The batches pane asks for its batch to be written to `path` (the screen writes it)."""

    batch: object  # core.batching.Batch
    path: str


@dataclass
class TokenSelected(Message):
    """A token chosen in the corpus, the encode pane or the vocabulary: the details line shows it."""

    token: int | None


@dataclass
class CountTokens(Message):
    """A view wants per-token counts over the whole corpus (counted in a worker)."""


@dataclass
class TokensCounted(Message):
    counts: TokenCounts
    session: Session  # the session they were counted on (another may be open by now)
    measured: bool  # the frozen model's totals were measured too


@dataclass
class PieceSelected(Message):
    piece: int | None  # the id under the piece table's cursor
    moved: bool = False  # the user moved the cursor (not a step that changed the rows under it)


@dataclass
class CorpusClicked(Message):
    offset: int  # char offset in the corpus window's text
    span: int | None = None  # the index of the token drawn there among the window's spans


@dataclass
class LatticeWordShown(Message):
    word: str | None  # the corpus word the lattice shows (None: none, or the encode box's)
