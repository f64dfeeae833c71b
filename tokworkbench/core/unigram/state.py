"""One round's vocabulary and what it does to the corpus: what the learner keeps per round."""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class RoundState:
    """One round's vocabulary, in vocabulary order."""

    pieces: list[str]
    freqs: list[float]  # course: seed frequency; em: expected count
    scores: list[float]  # log probabilities
    ids: np.ndarray | None = None  # em: each piece's index among the seed pieces
    # em: the characters SentencePiece's model has dropped (expected under 0.5 times, or on no
    # best path), per piece; ours keeps them, scored as its unknown then (see em.py)
    absent: np.ndarray | None = None


@dataclass
class RoundAnalysis:
    """What the current vocabulary does to the corpus, and what the next round would remove."""

    loss: float
    increases: dict[str, float]  # multi-character piece -> loss increase if removed
    to_remove: list[str]
    tokens: int  # total tokens over the corpus under the training segmentation
    use: dict[str, float] = field(default_factory=dict)  # piece -> frequency shown in the table
