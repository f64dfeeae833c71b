"""Unigram LM: the course's pruning algorithm step by step, and SentencePiece-style EM.

`UnigramLearner` (learner.py) is the training state the workbench steps; `UnigramModel`
(model.py) is what it freezes; `lattice(model, word)` is the picture of one word.

The names below are read from their modules when first asked for (PEP 562): reading a
Unigram model, or any model, imports `unigram.model` and so this package, and the learner
with its EM (a tenth of a second of a start here) is for training only.
"""

import importlib

_HOMES = {"UnigramConfig": "config", "UnigramLearner": "learner", "UNK": "model", "UnigramModel": "model",
          "lattice": "model", "Lattice": "rows", "LatticeEdge": "rows", "PieceRow": "rows", "RoundRow": "rows"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
