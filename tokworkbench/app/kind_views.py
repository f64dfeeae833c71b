"""How the screen shows each model kind: the app's one table keyed by a kind's name.

What a kind *is* (its step noun, its options, whether its steps stop at the target) is the
core's `Kind` record (core/registry/kinds.py); this table holds only what the screen makes of
it: which panes list its next step and its history, what the chart tab is called, whether the
lattice tab shows, which key makes a step, and how its settings read in a line. No other module
of the app compares a kind's name (tests/test_architecture.py checks it).
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

from tokworkbench.core.models.kind import Kind
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.registry.kinds import kind_named
from tokworkbench.core.session.settings import CUSTOM, Settings


def _split_label(s: Settings) -> str:
    return f"/{s.pattern}/" if s.split == CUSTOM else s.split


def _split_arg(s: Settings) -> str:
    return f"regex:{s.pattern}" if s.split == CUSTOM else s.split


def _sp_words(s: Settings) -> list[str]:
    """spm_train's piece options as `train` spells them, only those set; a value that starts with
    a dash goes after `=`, or argparse would read it as an option."""
    words = ["--split-digits"] if s.split_digits else []
    for flag, value in (("--user-defined-symbols", ",".join(s.user_defined_symbols)),
                        ("--control-symbols", ",".join(s.control_symbols)), ("--required-chars", s.required_chars)):
        if value:
            words += [f"{flag}={value}"] if value.startswith("-") else [flag, value]
    return words


def _sp_label(s: Settings) -> str:
    """The same options in the title's line: what they are, not every symbol."""
    marks = ["split digits"] if s.split_digits else []
    for items, noun in ((s.user_defined_symbols, "user symbol"), (s.control_symbols, "control symbol"),
                        (s.required_chars, "required char")):
        if items:
            marks.append(f"{len(items)} {noun}{'' if len(items) == 1 else 's'}")
    return "".join(f" · {m}" for m in marks)


def _bpe_settings(s: Settings) -> str:
    return (f"{s.units.value} units · normalizer {s.normalizer} · split {_split_label(s)} · "
            f"tie-break {s.tie_break} · target {s.target:,}")


def _bpe_command(s: Settings) -> list[str]:
    return ["tokworkbench", "train", "PATH...", "--units", s.units.value, "--normalize", s.normalizer,
            "--split", _split_arg(s), "--tie-break", s.tie_break, "--vocab-size", str(s.target)]


def _unigram_settings(s: Settings) -> str:
    pruning = f"prune {s.prune_fraction:g}" if s.algorithm == "course" else f"keep {s.shrinking_factor:g}"
    return (f"unigram {s.algorithm} · normalizer {s.normalizer} · split {_split_label(s)} · seed {s.seed_size:,} · "
            f"{pruning}{_sp_label(s)} · target {s.target:,}")


def _unigram_command(s: Settings) -> list[str]:
    words = ["tokworkbench", "train", "PATH...", "--kind", s.kind, "--algorithm", s.algorithm,
             "--normalize", s.normalizer, "--split", _split_arg(s), "--vocab-size", str(s.target),
             "--seed-size", str(s.seed_size)]
    if s.algorithm == "course":
        return words + ["--prune-fraction", f"{s.prune_fraction:g}"]
    return words + ["--shrinking-factor", f"{s.shrinking_factor:g}", "--sub-iterations", str(s.sub_iterations),
                    *(["--num-threads", str(s.num_threads)] if s.num_threads != Settings.num_threads else []),
                    "--max-piece-length", str(s.max_piece_length), "--character-coverage", f"{s.character_coverage:g}",
                    *(["--byte-fallback"] if s.byte_fallback else []), *_sp_words(s)]


def _spbpe_settings(s: Settings) -> str:
    fallback = " · byte fallback" if s.byte_fallback else ""
    return (f"spm_train bpe · {s.sp_normalization} · coverage {s.character_coverage:g}{fallback} · "
            f"longest piece {s.max_piece_length}{_sp_label(s)} · target {s.target:,}")


def _spbpe_command(s: Settings) -> list[str]:
    words = ["tokworkbench", "train", "PATH...", "--kind", s.kind, "--vocab-size", str(s.target),
             "--character-coverage", f"{s.character_coverage:g}", "--sp-normalization", s.sp_normalization,
             "--max-piece-length", str(s.max_piece_length)]
    return words + (["--byte-fallback"] if s.byte_fallback else []) + _sp_words(s)


def _merges_replayed(kind: Kind, model: Model, vocab: int, source: str) -> str:
    return f"replaying {kind.count(len(model.merges))} from {source}: n steps through them, r runs to their end"


def _vocabulary_replayed(kind: Kind, model: Model, vocab: int, source: str) -> str:
    return (f"replaying {source}: its vocabulary ({vocab:,} pieces on this corpus) is {kind.step} 0, "
            f"and each {kind.step} after it prunes it: n one {kind.step}, r to the target")


@dataclass(frozen=True)
class KindView:
    panes: tuple[str, ...]  # the right column's panes (widget ids) shown for this kind; the others hide
    next_pane: str | None  # the pane whose rows are the snapshot's next_rows (it has the filter box)
    history_pane: str  # the pane the history pages go to
    table: str  # what has the keys when the kind comes on screen
    chart: str  # the chart tab's label, and which chart it draws: "Compression" or "Loss"
    lattice: bool  # whether the lattice tab shows (and a click on a corpus word opens it)
    step_key: str  # the action n and space run: "step" (Merge), "round"; "" for no step key
    nothing_left: str  # why no step is left
    exhausted: str  # the same, as a finished run's reason
    settings_line: Callable[[Settings], str]  # the settings in the title's one line
    command: Callable[[Settings], list[str]]  # the `train` words that reproduce them (no specials)
    replayed: Callable[[Kind, Model, int, str], str]  # what a replay makes (kind, model, vocabulary, source)
    replay_note: str  # what the question before a replay adds to "Undo the 3 merges made here and replay m.json?"
    back_to: Callable[[int], str]  # where a rewind to step n goes: "step 12", "round 3", "the seed vocabulary"
    choice: str = ""  # the settings dialog's words for it (a kind that is not trained is no choice)
    rows_shown: int = 400  # rows the next pane draws: the snapshot ranks no more (View.rows)

    @property
    def marks_pieces(self) -> bool:
        """The corpus marks the selected piece (and the lattice's word), not the selected pair."""
        return self.next_pane == "pieces"


BPE_VIEW = KindView(
    panes=("pairs", "merges"), next_pane="pairs", history_pane="merges", table="pair-table", rows_shown=60,
    chart="Compression", lattice=False, step_key="step",
    nothing_left="no pair is left to merge: every chunk is one token", exhausted="no pair left to merge",
    settings_line=_bpe_settings, command=_bpe_command, replayed=_merges_replayed, replay_note="",
    back_to=lambda step: f"step {step:,}", choice="BPE (merges, one a step)")
INSPECTED_VIEW = replace(BPE_VIEW, panes=(), next_pane=None, step_key="", choice="")
VIEWS: dict[str, KindView] = {
    "bpe": BPE_VIEW,
    "unigram": KindView(
        panes=("pieces", "rounds"), next_pane="pieces", history_pane="rounds", table="piece-table",
        chart="Loss", lattice=True, step_key="round",
        nothing_left="nothing is left to prune: only single characters remain", exhausted="nothing left to prune",
        settings_line=_unigram_settings, command=_unigram_command, replayed=_vocabulary_replayed,
        replay_note=" Its vocabulary becomes round 0, and the rounds after it prune it.",
        back_to=lambda step: f"round {step:,}" if step else "the seed vocabulary",
        choice="Unigram LM (pruning rounds, one a step)"),
    # kinds that are only inspected: no next step, no history, no pane of their own
    "fixed": INSPECTED_VIEW,
    "spbpe": replace(BPE_VIEW, settings_line=_spbpe_settings, command=_spbpe_command,
                     choice="SentencePiece BPE (spm_train's merges, one a step)"),
    "wordpiece": INSPECTED_VIEW,
}
RIGHT_PANES: tuple[str, ...] = tuple(dict.fromkeys(p for view in VIEWS.values() for p in view.panes))


def view_of(kind: str) -> KindView:
    return VIEWS.get(kind, BPE_VIEW)


def kinds_where(test: Callable[[KindView], bool]) -> frozenset[str]:
    """The kinds whose view passes `test`: the keys one kind has (`Action.kinds`)."""
    return frozenset(name for name, view in VIEWS.items() if test(view))


def step_noun(kind: str) -> str:
    """What one step is called: the core's noun (a BPE merge, a Unigram round); a kind that is
    not trained counts its none as merges."""
    return kind_named(kind).step or "merge"
