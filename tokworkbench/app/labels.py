"""How the app words what the core reports: settings, counts, and why a run stopped."""

import shlex

from tokworkbench.app.kind_views import step_noun, view_of  # noqa: F401 (step_noun: the widgets' import)
from tokworkbench.core.models.protocol import MergeRanked, OwnDisplay, WholeOnly
from tokworkbench.core.registry.kinds import kind_named
from tokworkbench.core.session.session import FinishReason, RunFinished
from tokworkbench.core.session.settings import Settings


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 merge', '2 merges', '1,234 docs'."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def describe_settings(s: Settings) -> str:
    return view_of(s.kind).settings_line(s)


FINISHED = {
    FinishReason.TARGET: "reached the target",
    FinishReason.REPLAYED: "replayed every merge (r again trains on from here)",
    FinishReason.CANCELLED: "cancelled",
    FinishReason.EXHAUSTED: "no pair left to merge",
}


def nothing_left(kind: str) -> str:
    return view_of(kind).nothing_left


def describe_finish(finished: RunFinished, vocab_size: int, steps: int, kind: str = "bpe") -> str:
    """The run's own count and the total, named apart (a toast once said 4,734 where the
    header said 4,744: one was the run's, the other the total)."""
    noun = step_noun(kind)
    reason = view_of(kind).exhausted if finished.reason is FinishReason.EXHAUSTED else FINISHED[finished.reason]
    said = (f"{reason}: {plural(finished.done, noun)} in this run, "
            f"{steps:,} in all, vocabulary {vocab_size:,}")
    if finished.after_cancel is not None:
        said += f" ({plural(finished.after_cancel, noun)} made after the cancel key)"
    return said


def describe_stop(finished: RunFinished, kind: str = "bpe") -> str:
    """The progress line's words when the run's child has stopped (its state still coming back):
    why it stopped, as the message after says it, not "stopped" for a run that reached its target."""
    noun = step_noun(kind)
    reason = view_of(kind).exhausted if finished.reason is FinishReason.EXHAUSTED \
        else FINISHED.get(finished.reason, "stopped").split(" (")[0]
    said = f"{reason}: {plural(finished.done, noun)} in this run"
    if finished.after_cancel is not None:
        said += f" ({plural(finished.after_cancel, noun)} after the key)"
    return said


def train_command(s: Settings) -> str:
    """The command line that trains what these settings train, to reproduce a session."""
    words = view_of(s.kind).command(s)
    given = _given_specials(s.special_tokens, s.roles.tokens)
    if len(given) == 1:
        words.append(f"--special={given[0]}")  # one value: it may begin with a dash
    elif given:
        words += ["--special", *given]
    for role, token in s.roles.items():
        words += [f"--{role}={token}"] if token.startswith("-") else [f"--{role}", token]
    return " ".join(w if w == "PATH..." else shlex.quote(w) for w in words) + " -o model.json"


def _given_specials(specials: tuple[str, ...], role_tokens) -> tuple[str, ...]:
    """The fewest leading specials that `train` extends to all of them with the roles' tokens
    (it appends each role's token --special does not name): `--bos=-x-` alone, not `--special -x-`,
    which argparse would read as an option."""
    for k in range(len(specials) + 1):
        if specials[:k] + tuple(t for t in role_tokens if t not in specials[:k]) == specials:
            return specials[:k]
    return specials


HELP_NOTES = """\
The pair table's first row (▶) is the next merge; / searches every pair, by text or by hex bytes.
In the history, count is how often the pair occurred when it was chosen; repl. is how many
replacements the merge made (fewer when occurrences overlap, as in "aaa"); tokens is the corpus
length after the step, and ratio the base units per token. ↺ marks replayed merges.
Red underlined characters are cut by a byte-level token. Everything is also in the command
palette (ctrl+p).

Unigram (settings c, model unigram): one step is one pruning round. The piece table shows each
piece's score, its frequency under the current segmentation, and how much the corpus loss would
grow without it; ✗ marks the pieces the next round removes (single characters never go). The
rounds table gives the vocabulary, the corpus loss and what each round removed. The Lattice tab
(L) draws every piece over its characters for a word of the encode box or the corpus window
(click a word there); the heavy top lane is the Viterbi path, and the best row the cheapest cost
to reach each position.
In course mode a word starts at cost 1, not 0, as the Hugging Face course computes it."""


def describe_inspection(source: str, model) -> str:
    """The title while a loaded tokenizer is inspected: which one, and what it is."""
    built = f"{len(model.merges):,} merges, " if isinstance(model, MergeRanked) else f"{kind_named(model.kind).noun}, "
    if isinstance(model, WholeOnly) and model.whole_tokens:
        built += f"{len(model.whole_tokens):,} whole-chunk only, "
    return (f"inspecting {source} · {model.vocab_size:,} tokens ({built}"
            f"{len(model.special_ids)} special) · split {model.pre_tokenizer.name} · "
            f"normalizer {model.normalizer_label if isinstance(model, OwnDisplay) else model.normalizer}")
