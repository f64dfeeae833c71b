"""Batches for a language model, cut from documents encoded with their boundaries.

The stream s is every document's ids (BOS + content + EOS) in order. Window i has inputs
s[i:i+T] and targets s[i+1:i+T+1]: target t is the id that follows input t. Starts are given,
strided (0, K, 2K, … while a whole window fits), or random: B draws, uniform on 0 … len(s)−T−1,
from `numpy.random.default_rng(seed)`, so a seed reproduces a batch on any machine.

A padded batch has one row per document instead. A row longer than T is cut to T and its last
target is still the document's next id; a shorter row is filled with PAD. `attention_mask` is
True on real ids, and a target is IGNORE (-100, what cross-entropy's ignore_index skips)
wherever the next position is PAD or past the document's end. With zero logits every valid
target costs ln V, so a correct masked mean loss is exactly `uniform_loss` = ln V.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tokworkbench.core.compat import fingerprint
from tokworkbench.core.errors import BatchError, EncodeError, RoleError
from tokworkbench.core.models.roles import encode_document, role_id

IGNORE = -100
MODES = ("starts", "stride", "random", "pad")
MAX_CELLS = 1 << 27  # ids in one batch's inputs: 1 GiB of int64 each for inputs and targets
MAX_TEXT_CELLS = 1 << 22  # and written as JSON or text, where an id is a Python int and its digits


def _check_cells(rows: int, t: int, hint: str, limit: int = MAX_CELLS) -> None:
    """Refuse, before allocating, a batch larger than `limit` (`-T 1e11 --pad-documents`
    asked numpy for 745 GiB)."""
    if rows * t > limit:
        where = "" if limit == MAX_CELLS else " written as JSON or text (NPZ holds more: --format npz -o OUT.npz)"
        raise BatchError(f"a batch of {rows:,} rows × {t:,} ids is {rows * t:,} ids, more than the "
                         f"{limit:,} one batch may hold{where}; {hint}")


def check_writable_as_text(batch: "Batch") -> None:
    """Refuse a batch too large to write as JSON or text: --batch 1e7 went past 11 GB of
    Python numbers before it was killed. NPZ writes the arrays as they are."""
    cells = batch.inputs.size
    if cells > MAX_TEXT_CELLS:
        raise BatchError(f"a batch of {cells:,} ids is more than {MAX_TEXT_CELLS:,} to write as JSON or text; "
                         "write it as NPZ (--format npz -o OUT.npz), or ask for fewer rows")


def _positive(value, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise BatchError(f"{what} must be a whole number of at least 1, not {value!r}")


@dataclass(frozen=True)
class BatchSpec:
    """How to cut a batch. `batch` is B for random starts, and a cap on the rows of the other
    modes (None: every window, every document)."""

    context: int
    mode: str = "stride"
    starts: tuple[int, ...] = ()
    stride: int | None = None
    batch: int | None = None
    seed: int = 0

    def __post_init__(self):
        object.__setattr__(self, "starts", tuple(self.starts))
        _positive(self.context, "the context T")
        if self.mode not in MODES:
            raise BatchError(f"unknown batch mode {self.mode!r}; choose one of {', '.join(MODES)}")
        if self.batch is not None:
            _positive(self.batch, "the batch size B")
        if self.mode == "starts":
            if not self.starts:
                raise BatchError("give at least one start (e.g. 0,5)")
            for s in self.starts:
                if not isinstance(s, int) or isinstance(s, bool) or s < 0:
                    raise BatchError(f"start {s!r} is out of range: starts are whole numbers from 0")
        if self.mode == "stride":
            _positive(self.stride if self.stride is not None else self.context, "the stride K")
        if self.mode == "random":
            if self.batch is None:
                raise BatchError("random starts need the batch size B")
            if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
                raise BatchError(f"the seed must be a whole number from 0, not {self.seed!r}")

    @property
    def padded(self) -> bool:
        return self.mode == "pad"


@dataclass(frozen=True, eq=False)
class Batch:
    """B rows of T ids; arrays are int64 (the mask bool) and must not be written to."""

    spec: BatchSpec
    inputs: np.ndarray
    targets: np.ndarray
    """IGNORE (-100) where a target is ignored."""
    starts: np.ndarray
    """Where each row starts in the stream (padded: where its document starts)."""
    attention_mask: np.ndarray | None
    """Padded batches: True on real ids, False on PAD; None for windows (all real)."""
    valid_targets: int
    uniform_loss: float | None
    """Padded batches: ln V, what cross-entropy with ignore_index=-100 gives on zero logits."""
    fingerprint: str
    """The tokenizer's (compat.fingerprint), so a pipeline can check it made these ids."""
    vocab_size: int
    stream_length: int
    document_starts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Where each document starts in the stream (for drawing boundaries)."""

    @property
    def shape(self) -> tuple[int, int]:
        return self.inputs.shape

    def allowed(self, row: int) -> np.ndarray:
        """allowed[t, j] = j ≤ t and attention_mask[row, j]: what position t may attend to,
        the causal mask and the padding mask together (T×T bool)."""
        if not 0 <= row < self.inputs.shape[0]:
            raise BatchError(f"row {row} is out of range: this batch has rows 0..{self.inputs.shape[0] - 1}")
        t = self.inputs.shape[1]
        causal = np.tri(t, dtype=bool)
        return causal if self.attention_mask is None else causal & self.attention_mask[row][None, :]


def document_ids(model, texts: Iterable[str]) -> list[list[int]]:
    """Each document's ids, boundaries included; an encoding error names the document."""
    out = []
    for k, text in enumerate(texts):
        try:
            out.append(encode_document(model, text))
        except EncodeError as exc:
            raise EncodeError(f"document {k}: {exc}") from None
    return out


def document_stream(model, texts: Iterable[str]) -> np.ndarray:
    """Every document's ids with boundaries, in order, as one int64 array."""
    docs = document_ids(model, texts)
    return np.fromiter((i for d in docs for i in d), np.int64, sum(map(len, docs)))


def make_batch(model, texts: Iterable[str], spec: BatchSpec, limit: int = MAX_CELLS) -> Batch:
    """`limit`: the ids the batch may hold, checked before its arrays are made (MAX_TEXT_CELLS
    for a batch to be written as JSON or text)."""
    if spec.padded and role_id(model, "pad") is None:
        raise RoleError("padded batches need a PAD token, and this model has none "
                        "(give one a role: train or vocab with --pad TOKEN)")
    docs = document_ids(model, texts)
    if not docs:
        raise BatchError("no documents to cut a batch from")
    lengths = np.array([len(d) for d in docs], np.int64)
    doc_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    stream = np.fromiter((i for d in docs for i in d), np.int64, int(lengths.sum()))
    common = dict(fingerprint=fingerprint(model), vocab_size=model.vocab_size, stream_length=len(stream),
                  document_starts=_frozen(doc_starts))
    if spec.padded:
        return _padded(model, docs, doc_starts, spec, common, limit)
    starts = window_starts(len(stream), spec, limit)
    _check_cells(len(starts), spec.context, "use a smaller context, a larger stride or fewer rows (--batch)", limit)
    at = starts[:, None] + np.arange(spec.context)
    inputs, targets = stream[at], stream[at + 1]
    return Batch(spec, _frozen(inputs), _frozen(targets), _frozen(starts), None, int(targets.size), None, **common)


def window_starts(length: int, spec: BatchSpec, limit: int = MAX_CELLS) -> np.ndarray:
    """The starts of the windows `spec` asks for in a stream of `length` ids."""
    t = spec.context
    if length <= t:
        raise BatchError(f"the stream has {length} ids; a context of {t} needs at least {t + 1} ids")
    last = length - t - 1
    if spec.mode == "starts":
        for s in spec.starts:
            if s > last:
                raise BatchError(f"start {s} is out of range: with {length} ids and a context of {t}, "
                                 f"starts go from 0 to {last}")
        starts = np.array(spec.starts, np.int64)
    elif spec.mode == "stride":
        starts = np.arange(0, last + 1, spec.stride or t, dtype=np.int64)
    else:  # checked before the draw: --batch 1e11 asked numpy for 745 GiB of starts
        _check_cells(spec.batch, t, "ask for fewer rows (--batch)", limit)
        return np.random.default_rng(spec.seed).integers(0, last + 1, size=spec.batch, dtype=np.int64)
    return starts[: spec.batch] if spec.batch is not None else starts


def _padded(model, docs: Sequence[list[int]], doc_starts: np.ndarray, spec: BatchSpec, common: dict,
            limit: int) -> Batch:
    pad = role_id(model, "pad")
    rows = docs[: spec.batch] if spec.batch is not None else docs
    b, t = len(rows), spec.context
    longest = max(map(len, rows))
    _check_cells(b, t, f"the longest document has {longest:,} ids, so a context of {longest:,} holds every one whole",
                 limit)
    inputs = np.full((b, t), pad, np.int64)
    targets = np.full((b, t), IGNORE, np.int64)
    mask = np.zeros((b, t), bool)
    for r, d in enumerate(rows):
        n = min(len(d), t)
        inputs[r, :n] = d[:n]
        mask[r, :n] = True
        m = max(0, min(len(d) - 1, t))  # targets that have a next id in the document
        targets[r, :m] = d[1 : m + 1]
    valid = int((targets != IGNORE).sum())
    loss = math.log(model.vocab_size) if valid else None
    return Batch(spec, _frozen(inputs), _frozen(targets), _frozen(doc_starts[:b].copy()), _frozen(mask), valid, loss,
                 **common)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
