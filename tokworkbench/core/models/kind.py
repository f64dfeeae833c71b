"""What the rest of the tool needs to know of a model kind, as one record.

Each kind is a package of its own (`core/bpe/`, `core/unigram/`, `core/fixed/`) with its
learner, its model and its model file; `core/registry/kinds.py` makes one `Kind` of each and is
the only place a kind's name is compared. The session, the formats, the CLI and the app ask the
record, so a new kind is a package and a registry entry, not an edit in every file that once
tested the kind's name.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokworkbench.core.models.protocol import Learner, Model

if TYPE_CHECKING:  # the settings live in the session layer, above the kinds
    from tokworkbench.core.session.settings import Settings


@dataclass(frozen=True)
class Kind:
    name: str
    title: str  # how messages name the kind: "BPE", "Unigram", "fixed vocabulary"
    noun: str  # how they name one model of it: "BPE model", "fixed vocabulary"
    step: str  # what one step is: "merge", "round"; "" for a kind that is not trained
    to_json: Callable[[Model, dict | None], dict]  # our model file's fields (files/envelope.py)
    from_json: Callable[[dict, int], Model]  # (the parsed file, max token bytes)
    exports: tuple[str, ...] = ()  # the foreign formats that can carry it exactly
    export_refusal: str = ""  # why the other formats cannot
    check_export: Callable[[Model, str], list[str]] | None = None  # raises ExportError; notes
    write_export: Callable[[Model, str, Path], list[str]] | None = None
    config: "Callable[[Settings], Any] | None" = None  # the validated training config
    learner: Callable[..., Learner] | None = None  # (texts, config, keep_layout, progress, counted)
    options: tuple[str, ...] = ()  # the Settings fields only this kind reads
    own_tokens: tuple[str, ...] = ()  # special tokens every model of the kind has (Unigram's <unk>)
    takes_special_tokens: bool = True  # whether training may add special tokens of the user's
    stops_at_target: bool = False  # steps only shrink the vocabulary: none past the target
    default_roles: tuple[tuple[str, str], ...] = ()  # (role, own token) a trained model has unless told otherwise
    # whether its learner, so set up, reads the documents' lines itself (SentencePiece's sentences)
    trains_on_lines: "Callable[[Settings], bool]" = field(default=lambda settings: False)
    fit: "Callable[[Settings, int, Iterable[str]], dict] | None" = None  # settings a corpus needs
    history_csv: Callable[[Learner, Path], Path] | None = None
    replay: "Callable[[Learner, Model, Settings], Learner] | None" = None
    default_units: str = "byte"
    default_split: str = "gpt4"
    describe: Callable[[Model], list[str]] = field(default=lambda model: [])  # what `inspect` adds

    @property
    def trainable(self) -> bool:
        return self.learner is not None

    @property
    def steps(self) -> str:
        return self.step + "s"

    def count(self, n: int) -> str:
        """'1 merge', '3 rounds'."""
        return f"{n:,} {self.step if n == 1 else self.steps}"
