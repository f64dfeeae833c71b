"""What every learner's `run` asks first: how many steps to make."""

from tokworkbench.core.errors import TrainingError
from tokworkbench.core.models.protocol import Learner


def steps_to_make(learner: Learner, vocab_size: int | None, count: int | None, noun: str) -> int:
    """Steps a run makes for a vocabulary target or a step count (exactly one of them); `noun`
    is what the kind calls a step, plural ("merges", "rounds"), for the messages."""
    if (vocab_size is None) == (count is None):
        raise TrainingError(f"give exactly one of a vocabulary size or a number of {noun}")
    if count is not None and count < 0:
        raise TrainingError(f"number of {noun} must be 0 or more, not {count}")
    return learner.steps_for_vocab(vocab_size) if vocab_size is not None else count
