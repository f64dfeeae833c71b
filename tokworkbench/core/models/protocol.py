"""What a model kind implements, so the session, the views and the formats can work with any.

A kind has two halves. The *learner* is training state that changes a step at a time and can be
undone exactly; the *model* is what a learner (or a file) freezes: it encodes and decodes. BPE is
the first kind (bpe/trainer.py's `Trainer`, bpe/model.py's `Tokenizer`); Unigram and fixed
vocabularies implement the same two protocols. Every id here is an outside id.

What only some kinds can do is a small capability protocol below (`MergeRanked`, `WholeOnly`, `Scored`,
`HasLattice`, `OwnDisplay`, `HasUnknown`, `CharLengths`, `Continuations`, `TypedPieces`,
`Replaying`, `Transferable`, `NormalizesText`, `EncodesBatches`), checked with `isinstance`: a view asks whether a model has merges,
never which kind it is.

Document encoding (BOS + content + EOS), decoding that skips specials, batches and fingerprints
are functions over `Model` (models/roles.py, batching/, compat.py): a kind gets them by having
`roles` and the methods below, with nothing of its own to write.
"""

from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from tokworkbench.core.models.roles import Roles
from tokworkbench.core.models.tokenkinds import TokenKind
from tokworkbench.core.text.pretokenize import PreTokenizer
from tokworkbench.core.units import Units

if TYPE_CHECKING:  # the views' span type; segments.py asks these protocols in turn
    from tokworkbench.core.inspection.segments import TokenSpan


@runtime_checkable
class Model(Protocol):
    kind: str
    units: Units
    normalizer: str
    pre_tokenizer: PreTokenizer
    special_tokens: tuple[str, ...]
    roles: Roles
    """bos/eos/pad/unk, each naming one of the special tokens, or None."""

    @property
    def vocab_size(self) -> int: ...

    @property
    def special_ids(self) -> dict[str, int]: ...

    def encode(self, text: str, allowed_special: Collection[str] | str = (),
               disallowed_special: Collection[str] | str = "all") -> list[int]: ...

    def encode_ordinary(self, text: str) -> list[int]: ...

    def encode_chunks(self, text: str) -> list[tuple[str, list[int]]]:
        """Each pre-tokenizer chunk of the normalized text with its ids (what views draw)."""

    def decode(self, ids: list[int], errors: str = "strict") -> str: ...

    def decode_bytes(self, ids: list[int]) -> bytes: ...

    def token(self, tid: int) -> bytes | str:
        """The vocabulary entry: bytes for byte units, str for char units."""

    def token_bytes(self, tid: int) -> bytes: ...

    def token_text(self, tid: int) -> str: ...


Next = TypeVar("Next", covariant=True)  # what the next step will do: BPE's pair, Unigram's pieces to prune
Record = TypeVar("Record", covariant=True)  # one step made: bpe/trainer.py's MergeRecord, unigram/rows.py's RoundRow
Row = TypeVar("Row", covariant=True)  # a row of the live table of what comes next: PairRow, PieceRow
HistoryRow = TypeVar("HistoryRow", covariant=True)  # a row of the history table: MergeRow, RoundRow


@runtime_checkable
class Learner(Protocol[Next, Record, Row, HistoryRow]):
    """Training state, stepped and undone one step at a time (a merge, a pruning round).
    Each kind says its step types: BPE's Trainer is a Learner[Pair, MergeRecord, PairRow,
    MergeRow], Unigram's a Learner[tuple[str, ...], RoundRow, PieceRow, RoundRow]."""

    kind: str
    history: Sequence[Record]
    initial_tokens: int
    total_tokens: int
    base_size: int

    @property
    def vocab_size(self) -> int: ...

    @property
    def compression(self) -> float: ...

    def next_step(self) -> Next | None:
        """What `step` will do (a pair for BPE), or None when nothing is left to do."""

    def step_text(self, next_step: Any) -> str:
        """What that step makes, as text (the merged token)."""

    def step(self) -> Record | None:
        """One step; its record, or None when nothing is left to do."""

    def undo(self) -> Record | None:
        """Exactly the state before the last step; its record, or None."""

    def run(self, vocab_size: int | None = None, merges: int | None = None) -> Iterator[Record]: ...

    def steps_for_vocab(self, vocab_size: int) -> int:
        """Steps still needed to reach `vocab_size`; a clear error for a size that makes no sense."""

    def next_rows(self, k: int, query: str = "") -> tuple[list[Row], int]:
        """What the next step will do, best first (the BPE pair table, the Unigram piece
        table), only rows matching `query` if given; and how many rows there are in all."""

    def history_rows(self, k: int) -> list[HistoryRow]:
        """The newest k steps, oldest first, as the history table shows them."""

    def history_page(self, start: int, stop: int | None) -> tuple[list[HistoryRow], int]:
        """Rows `start:stop` (a slice: negative counts from the end) of the whole history
        table, oldest first, and how many rows the table has: the table is a virtual list that
        asks only for the rows on screen."""

    def compression_curve(self, points: int) -> list[float]:
        """Base units per token after each step, thinned to at most `points` values."""

    def token_lengths(self) -> list[int]:
        """How many vocabulary tokens have each length in base units (index = length)."""

    def model(self, with_history: bool = True) -> Model: ...

    def model_key(self) -> Any:
        """Equal keys mean equal models (what 'saved' compares)."""

    def window(self, doc: int, start: int, end: int) -> tuple[int, str, list["TokenSpan"], int]:
        """Where the window starts (clamped to the document), the normalized text of document
        `doc` from there, its token spans (offsets from that start), and the document's length;
        empty when the learner keeps no layout."""

    def training_state(self) -> dict: ...

    def restore_state(self, state: dict) -> None: ...


# -- what some kinds can do ------------------------------------------------------------------
@runtime_checkable
class MergeRanked(Protocol):
    """A model built by merges in rank order (BPE, tiktoken ranks): rank `base_size + r` is
    merge r, and `to_outside` gives the ids a file of its own numbered them with."""

    merges: Sequence[tuple[int, int]]
    ids: Any  # the outside ids in rank order, or None when they are the ranks themselves
    tie_break: str  # the rule its trainer broke equal counts with

    @property
    def base_size(self) -> int: ...

    @property
    def ranked_tokens(self) -> list: ...

    def rank_text(self, rank_id: int) -> str: ...

    def to_outside(self, ids: list[int]) -> list[int]: ...


@runtime_checkable
class WholeOnly(Protocol):
    """A model some of whose tokens no merge makes: a chunk reaches one only by being it whole
    (tiktoken looks every chunk up whole first; HF does with ignore_merges). Llama 3's ranks
    hold 588 such tokens (' việc', ' değişik'); the vocabulary and history views show them as
    "whole chunk only" instead of merge parents."""

    whole_tokens: Sequence[Any]  # their bytes (str for char units); empty in most models

    def is_whole_only(self, tid: int) -> bool:
        """Whether the token of outside id `tid` has no merge parents."""

    def apply_merges(self, units: list[int]) -> list[int]:
        """The inside ids the merges alone make of a run of base units (no whole-chunk lookup):
        what the merge tree shows in place of a whole-only token's parents."""


@runtime_checkable
class Scored(Protocol):
    """A model of scored pieces (Unigram): `pieces[i]` is (text, log probability)."""

    pieces: Sequence[tuple[str, float]]
    history: Sequence[Any]  # the rounds its file records

    @property
    def base_size(self) -> int:
        """The pieces no round may prune (every character, the specials)."""

    def matched_ids(self) -> list[int]:
        """The pieces Viterbi matches (the specials are matched otherwise)."""


@runtime_checkable
class HasLattice(Protocol):
    """A model that picks a segmentation from a lattice of candidate pieces."""

    start_cost: float

    def lattice(self, word: str) -> Any: ...


@runtime_checkable
class OwnDisplay(Protocol):
    """A model with a normalizer of its own (SentencePiece's, HF's) whose text is shown as the
    model sees it (metaspace's ▁ in place of spaces), and chunked without normalizing twice."""

    text_normalizer: Any  # None when the model normalizes with one of ours
    normalizer_label: str

    def display_text(self, text: str) -> str: ...

    def display_chunks(self, shown: str) -> list[tuple[str, list[int]]]: ...


@runtime_checkable
class NormalizesText(Protocol):
    """A model whose normalizer is more than `Model.normalizer`'s name (SentencePiece's, HF's
    steps, BERT's): the pipeline view asks it for the text its pre-tokenizer sees, rather than
    applying the named one (which is "none" for such models)."""

    def normalize_text(self, text: str) -> str: ...


@runtime_checkable
class EncodesBatches(Protocol):
    """A model that encodes a list of texts quicker than one at a time (SentencePiece BPE: the
    new words of all are merged in one numpy batch). The ids are each text's `encode_ordinary`;
    `encode_batch` below is what callers use for any model."""

    def encode_batch(self, texts: list[str]) -> list[list[int]]: ...


def encode_batch(model: Model, texts: list[str]) -> list[list[int]]:
    """Each text's `encode_ordinary` ids, in one call where the model has a batch path."""
    if isinstance(model, EncodesBatches):
        return model.encode_batch(texts)
    return [model.encode_ordinary(t) for t in texts]


@runtime_checkable
class HasUnknown(Protocol):
    """A model with one piece that what it has no piece for becomes (Unigram's, SentencePiece's
    <unk>); a byte-level model has none, a char-level BPE names one by its unk role."""

    @property
    def unk_id(self) -> int: ...


@runtime_checkable
class CharLengths(Protocol):
    """A model where an id need not cover its token's characters (an unknown-character token
    covers the one or the run it stands for): views ask how many each id of a chunk covers."""

    def char_lengths(self, chunk: str, ids: list[int]) -> list[int]: ...


@runtime_checkable
class Continuations(Protocol):
    """A model whose tokens are either word-initial or continue a word (WordPiece's `##ing`):
    the vocabulary view marks which, and shows a continuation without its prefix where asked."""

    continuing_subword_prefix: str

    def is_continuation(self, tid: int) -> bool: ...


@runtime_checkable
class TypedPieces(Protocol):
    """A model whose pieces carry a type of their own (SentencePiece's NORMAL, BYTE, CONTROL,
    USER_DEFINED, UNKNOWN): the vocabulary view labels and filters byte-fallback, control and
    user-defined pieces by it."""

    def piece_kind(self, tid: int) -> TokenKind: ...


@runtime_checkable
class SelfJoining(Protocol):
    """A model whose join of a token's own units can be asked alone (BPE's merges, tiktoken's
    ranks, SentencePiece BPE's scored merges). A token the join of its own units does not give
    can come out of no text: merges inside a token's span happen in the same order whatever
    surrounds it (inspection/health.py's unreachable tokens)."""

    def self_joins(self, tids: list[int]) -> list[bool | None]:
        """For each id: whether joining the token's units alone gives it back; None where the
        question has no answer (a special token, a byte piece reached only by fallback)."""


@runtime_checkable
class Replaying(Protocol):
    """A learner whose next steps can replay another model's merges."""

    @property
    def replaying(self) -> int:
        """Replayed steps still to come."""

    @property
    def replay_total(self) -> int: ...


@runtime_checkable
class Transferable(Protocol):
    """A learner whose state is large arrays: the training child sends them back through
    shared memory of this size, and the parent takes them over with `own_arrays`."""

    def state_nbytes(self) -> int: ...

    def own_arrays(self) -> None: ...

    def load_step_code(self) -> None:
        """Load, without stepping, the compiled code a step runs: the parent calls it while
        the child trains, so the first step after a cancel does not wait for it."""
