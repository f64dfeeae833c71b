"""Unigram LM: the course's pruning algorithm step by step, and SentencePiece-style EM.

`UnigramLearner` (learner.py) is the training state the workbench steps; `UnigramModel`
(model.py) is what it freezes; `lattice(model, word)` is the picture of one word.
"""

from tokworkbench.core.unigram.config import UnigramConfig
from tokworkbench.core.unigram.learner import UnigramLearner
from tokworkbench.core.unigram.model import UNK, UnigramModel, lattice
from tokworkbench.core.unigram.rows import Lattice, LatticeEdge, PieceRow, RoundRow

__all__ = ["UNK", "Lattice", "LatticeEdge", "PieceRow", "RoundRow", "UnigramConfig", "UnigramLearner",
           "UnigramModel", "lattice"]
