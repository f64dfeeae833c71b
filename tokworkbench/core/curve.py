"""The compression curve a plot draws: a long history thinned to the points a screen can show."""

from collections.abc import Callable, Sequence


def compression_curve(history: Sequence, initial: int, tokens_of: Callable[[object], int], points: int) -> list[float]:
    """Base units per token after each step, at most `points` evenly spaced steps, the last one
    always kept; `tokens_of(record)` is the corpus's token count after that step."""
    if not history:
        return []
    stride = max(1, -(-len(history) // points))
    picked = list(history[stride - 1 :: stride])
    if len(history) % stride:  # the last step was not picked
        picked.append(history[-1])
    return [initial / n if (n := tokens_of(r)) else 0.0 for r in picked]
