"""What the Unigram views draw: the piece table, the rounds history and the Viterbi lattice.

These shapes are the contract between the core (which fills them) and the app (which renders
them); they carry data, never UI text.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PieceRow:
    """One piece in the table of what the next round does, best kept first."""

    piece: str
    id: int  # outside id in the current vocabulary
    score: float  # log probability (em) or -(-log p) as the course shows it; higher is likelier
    freq: float  # frequency (course) or expected count (em) under the current segmentation
    loss_increase: float | None  # corpus loss added if this piece alone were removed; None for single characters
    removed_next: bool  # the next round removes it


@dataclass(frozen=True)
class RoundRow:
    """One round of the history; round 0 is the seed vocabulary."""

    round: int
    vocab_size: int  # pieces the algorithm prunes over, without <unk>
    loss: float  # corpus loss after the round (course mode: the course's figure, +1 start cost included)
    removed: tuple[str, ...]  # pieces this round removed (empty for round 0)
    tokens: int = 0  # tokens over the corpus after the round (training segmentation)


@dataclass(frozen=True)
class LatticeEdge:
    """A vocabulary piece over characters [start, end) of the lattice's text."""

    start: int
    end: int
    piece: str
    id: int
    cost: float  # what taking this edge adds to the path cost (-score)


@dataclass(frozen=True)
class Lattice:
    """Every vocabulary piece over its span of one word, and the Viterbi path through them."""

    text: str  # the word (a pre-tokenizer chunk), normalized
    edges: tuple[LatticeEdge, ...]  # sorted by (start, end)
    path: tuple[int, ...]  # indices into `edges` of the best segmentation, left to right
    best: tuple[float, ...]  # best cost to reach each position 0..len(text) (inf where unreachable)
    start_cost: float = 0.0  # what position 0 costs: 1.0 in course mode (the course's quirk), else 0.0
