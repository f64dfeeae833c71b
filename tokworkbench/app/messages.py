"""Messages that carry results up to the app: from workers (thread-safe) and from panels."""

from dataclasses import dataclass

from textual.message import Message

from ..core.text.corpus import Corpus, CorpusStats
from ..core.session import Settings
from ..core.bpe.trainer import Trainer
from .snapshot import Snapshot


@dataclass
class TrainProgress(Message):
    snapshot: Snapshot
    done: int
    total: int
    rate: float

    def can_replace(self, message: Message) -> bool:
        """Only the newest snapshot matters: a waiting older one is dropped, so keys never queue."""
        return isinstance(message, TrainProgress)


@dataclass
class TrainFinished(Message):
    snapshot: Snapshot
    done: int
    reason: str  # "target" | "cancelled" | "exhausted"


@dataclass
class LoadProgress(Message):
    done: int
    total: int
    what: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


@dataclass
class SessionReady(Message):
    corpus: Corpus
    stats: CorpusStats
    settings: Settings
    trainer: Trainer


@dataclass
class LoadFailed(Message):
    error: str


@dataclass
class PairSelected(Message):
    pair: tuple[int, int] | None


@dataclass
class DocumentSelected(Message):
    index: int


@dataclass
class WindowMove(Message):
    delta: int  # windows to move: -1 back, +1 on


@dataclass
class EncodeChanged(Message):
    text: str


@dataclass
class DecodeChanged(Message):
    text: str
