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
    for role, token in s.roles.items():
        words += [f"--{role}", token]
    return " ".join(w if w == "PATH..." else shlex.quote(w) for w in words) + " -o model.json"


HELP_NOTES = """\
The pair table's first row (▶) is the next merge; / searches every pair, by text or by hex bytes.
In the history, count is how often the pair occurred when it was chosen; repl. is how many
replacements the merge made (fewer when occurrences overlap, as in "aaa"); tokens is the corpus
length after the step, and ratio the base units per token. ↺ marks replayed merges.
Red underlined characters are cut by a byte-level token. Everything is also in the command
palette (ctrl+p)."""


def describe_inspection(source: str, model) -> str:
    """The title while a loaded tokenizer is inspected: which one, and what it is."""
    merges = len(getattr(model, "merges", ()))
    return (f"inspecting {source} · {model.vocab_size:,} tokens ({merges:,} merges, "
            f"{len(model.special_tokens)} special) · split {model.pre_tokenizer.name} · "
            f"normalizer {model.normalizer}")


def why_not(action: str, running: bool, loading: bool, inspecting: bool = False) -> str:
    """Why a dimmed key cannot act now, in a few words."""
    if inspecting:
        return "a loaded tokenizer is inspected, not trained (start without -m to train one)"
    if running:
        return "a run is going: escape cancels it"
    if loading:
        return "the corpus is still loading"
    if action in ("undo", "reset"):
        return "nothing to undo: no merge has been made"
    return "no pair is left to merge: every chunk is one token"
