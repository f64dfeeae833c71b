"""How the app words what the core reports: settings, counts, and why a run stopped."""

import shlex

from ..core.session import FinishReason, RunFinished
from ..core.settings import CUSTOM, Settings


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 merge', '2 merges', '1,234 docs'."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def describe_settings(s: Settings) -> str:
    split = f"/{s.pattern}/" if s.split == CUSTOM else s.split
    return (f"{s.units.value} units · normalizer {s.normalizer} · split {split} · "
            f"tie-break {s.tie_break} · target {s.target:,}")


FINISHED = {
    FinishReason.TARGET: "reached the target",
    FinishReason.REPLAYED: "replayed every merge (r again trains on from here)",
    FinishReason.CANCELLED: "cancelled",
    FinishReason.EXHAUSTED: "no pair left to merge",
}


def describe_finish(finished: RunFinished, vocab_size: int, steps: int) -> str:
    """The run's own count and the total, named apart (a toast once said 4,734 where the
    header said 4,744: one was the run's, the other the total)."""
    said = (f"{FINISHED[finished.reason]}: {plural(finished.done, 'merge')} in this run, "
            f"{steps:,} in all, vocabulary {vocab_size:,}")
    if finished.after_cancel is not None:
        said += f" ({plural(finished.after_cancel, 'merge')} made after the cancel key)"
    return said


def train_command(s: Settings) -> str:
    """The command line that trains what these settings train, to reproduce a session."""
    split = f"regex:{s.pattern}" if s.split == CUSTOM else s.split
    words = ["tokworkbench", "train", "PATH...", "--units", s.units.value, "--normalize", s.normalizer,
             "--split", split, "--tie-break", s.tie_break, "--vocab-size", str(s.target)]
    if s.special_tokens:
        words += ["--special", *s.special_tokens]
    return " ".join(w if w == "PATH..." else shlex.quote(w) for w in words) + " -o model.json"
