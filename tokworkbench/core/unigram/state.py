"""One round's vocabulary and what it does to the corpus: what the learner keeps per round."""

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Model:
    """em: spm_train's trainer model (spmtrain.py): seed indices and float32 scores, in its order."""

    seeds: np.ndarray
    scores: np.ndarray


@dataclass
class RoundState:
    """One round's vocabulary, in vocabulary order."""

    pieces: list[str]
    freqs: list[float]  # course: seed frequency; em: expected count
    scores: list[float]  # log probabilities
    ids: np.ndarray | None = None  # em: each piece's index among the seed pieces
    # em: the trainer's model (its pieces in its own order), and where the round stands in
    # spm_train's loop ("em": EM done, "final": finalized; em.py)
    model: Model | None = None
    stage: str = ""


@dataclass
class RoundAnalysis:
    """What the current vocabulary does to the corpus, and what the next round would remove."""

    loss: float
    increases: dict[str, float]  # multi-character piece -> loss increase if removed
    to_remove: list[str]
    tokens: int  # total tokens over the corpus under the training segmentation
    use: dict[str, float] = field(default_factory=dict)  # piece -> frequency shown in the table
    finishes: bool = False  # em: the next round is spm_train's finalization (it may remove nothing)
