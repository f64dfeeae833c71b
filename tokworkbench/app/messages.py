"""Messages that carry results up to the app: from workers (thread-safe) and from panels."""

from dataclasses import dataclass

from textual.message import Message

from ..core.corpus import Corpus
from ..core.session import Settings
from ..core.trainer import Trainer
from .snapshot import Snapshot


@dataclass
class TrainProgress(Message):
    snapshot: Snapshot
    done: int
    total: int
    rate: float


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


@dataclass
class SessionReady(Message):
    corpus: Corpus
    settings: Settings
    trainer: Trainer
    seconds: float


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
