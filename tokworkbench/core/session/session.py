"""One workbench session without a screen: corpus, settings, learner, what was saved, a replay.

The app and the tests drive the same verbs (step, undo, undo_all, run, save, export, replay,
snapshot); the app only renders what `snapshot` returns. Every verb takes the session's lock,
so a worker thread and the UI thread never see a learner halfway through a step.
"""

import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from tokworkbench.core.errors import CountFileError, TrainingError
from tokworkbench.core.files.countfile import looks_like_count_file, read_counts
from tokworkbench.core.models.protocol import Learner, Model, Replaying
from tokworkbench.core.models.roles import Roles, with_roles
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import check, check_export_outputs, export
from tokworkbench.core.registry.kinds import kind_of
from tokworkbench.core.session.frozen import FrozenLearner, inspect_settings
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import Snapshot, View, take_snapshot
from tokworkbench.core.text.chunks import ChunkCounts
from tokworkbench.core.text.corpus import Corpus, CorpusStats, load_corpus, require_text

FRAME = 0.2  # seconds between progress reports while a run goes: a few a second is plenty


class FinishReason(Enum):
    TARGET = "target"  # the target vocabulary was reached
    REPLAYED = "replayed"  # the replayed merges are all made; training would go on from here
    CANCELLED = "cancelled"
    EXHAUSTED = "exhausted"  # nothing is left to merge
    FAILED = "failed"


@dataclass(frozen=True)
class RunFinished:
    reason: FinishReason
    done: int  # steps made by this run
    error: str | None = None  # what went wrong, when the reason is FAILED
    after_cancel: int | None = None  # steps made between the cancel request and the stop


@dataclass(frozen=True)
class RunProgress:
    done: int  # steps made when `snapshot` was taken
    total: int
    rate: float  # steps per second so far
    snapshot: Snapshot
    made: Callable[[], int] | None = field(default=None, compare=False)  # the run's own count, live

    def made_now(self) -> int:
        """Steps the run has made by now: a report waits for the screen (a frame or two of a
        busy UI), while the run goes on; the screen says this count, not the report's."""
        return max(self.done, self.made()) if self.made is not None else self.done


Progress = Callable[[int, int, str], None]  # (done, total, what is being done)


class Session:
    def __init__(self, corpus: Corpus, settings: Settings, progress: Progress | None = None,
                 counted: "Session | None" = None, counts: ChunkCounts | None = None,
                 counts_source: str | None = None, learner: Learner | None = None):
        """Build the learner over `corpus` (the slow part: pre-tokenizing and counting, skipped
        when `counted` is a session whose counts these settings can reuse, when `counts` come
        from a count file (then there is no text, only chunks and their counts), or when
        `learner` is given)."""
        self.corpus = corpus
        self.counts_source = counts_source if counts is not None else (counted.counts_source if counted else None)
        if self.counts_source is not None:
            counts = counts if counts is not None else counted.learner.chunk_table
            if counted is not None and not counted.counts_fit(settings):
                raise CountFileError(f"{self.counts_source} was counted with fixed settings: the normalizer and "
                                     "the pre-tokenizer cannot change (count the text again with the new ones)")
        self.stats: CorpusStats = corpus.stats() if counts is None else _counted_stats(counts)
        if settings.fit:  # a seed and target left to the corpus (the command line's defaults)
            settings = settings.fitted(self.stats.distinct_chars)
        self.settings = settings
        settings.config()  # a bad choice fails here, before any counting
        report = progress or (lambda done, total, what: None)
        total = max(1, self.stats.chars)
        counting = "pre-tokenizing and counting chunks…"
        report(0, total, counting)
        reuse = counted.learner.chunk_table if counted is not None and counted.counts_fit(settings) else counts
        self.learner: Learner = learner or settings.learner(
            (d.text for d in corpus.documents), keep_layout=True,
            progress=lambda chars: report(chars, total, counting), counted=reuse)
        self.lock = threading.Lock()
        self._saved_key = self._key()  # nothing trained yet: nothing to lose
        self.replay_source: str | None = None
        self.inspected: str | None = None  # what `inspect` opened; None while training
        self.count_file: str | None = None  # the count file the session was opened from

    @classmethod
    def inspect(cls, corpus: Corpus, model: Model, source: str) -> "Session":
        """A session that shows `model`, frozen, on `corpus`: nothing is counted or encoded up
        front (session/frozen.py), and every training verb has nothing to do."""
        learner = FrozenLearner(model, [d.text for d in corpus.documents], source)
        session = cls(corpus, inspect_settings(model), learner=learner)
        session.inspected = source
        return session

    @classmethod
    def open(cls, paths: list[str], settings: Settings, progress: Progress | None = None) -> "Session":
        """Read files or folders (strict UTF-8) and build a session over them; a single count
        file (`tokworkbench count`) opens as its chunks and counts."""
        if len(paths) == 1 and looks_like_count_file(paths[0]):
            return cls.from_counts(paths[0], settings, progress)
        report = progress or (lambda done, total, what: None)
        corpus = load_corpus(paths, "strict", lambda done, total, name: report(done, total, f"reading {Path(name).name}"))
        return cls(corpus, settings, progress)

    @classmethod
    def from_counts(cls, path: str | Path, settings: Settings, progress: Progress | None = None) -> "Session":
        """A session over a count file's chunks: the file fixes the normalizer and the
        pre-tokenizer (the settings take them from it); there are no documents to draw."""
        counts, normalizer, pre = read_counts(path)
        require_text(counts.chars)
        settings = settings.with_(normalizer=normalizer, **Settings.split_of(pre))
        session = cls(Corpus([]), settings, progress, counts=counts, counts_source=Path(path).name)
        session.count_file = str(path)
        return session

    def with_settings(self, settings: Settings, progress: Progress | None = None) -> "Session":
        """A new session on the same corpus: what changing units, split or tie-break means.
        Only a new normalizer or pre-tokenizer pre-tokenizes the corpus again."""
        session = Session(self.corpus, settings, progress, counted=self)
        session.count_file = self.count_file
        return session

    def counts_fit(self, settings: Settings) -> bool:
        """Whether this session's chunk counts are what `settings` would count."""
        mine = self.settings
        return (settings.normalizer, settings.split, settings.pattern) == (mine.normalizer, mine.split, mine.pattern)

    # -- reading ---------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        return len(self.learner.history)

    @property
    def unsaved(self) -> bool:
        """Whether quitting now would lose training: steps made and not saved as they stand."""
        return self.steps > 0 and self._key() != self._saved_key

    def _key(self):
        """What 'saved' compares: the learner's model and the roles the file records."""
        return self.learner.model_key(), self.settings.roles

    def snapshot(self, view: View = View()) -> Snapshot:
        with self.lock:
            total = self.learner.replay_total if isinstance(self.learner, Replaying) else 0
            return take_snapshot(self.learner, view, self.settings.target, self._replaying(), total,
                                 self.settings.roles)

    def history_page(self, start: int, stop: int) -> tuple[list, int]:
        """Rows start:stop of the whole history table, and how many it has (the table shows a
        few at a time, and asks for those it scrolls to)."""
        with self.lock:
            return self.learner.history_page(start, stop)

    def model(self) -> Model:
        """The learner's model with the settings' special-token roles."""
        with self.lock:
            return with_roles(self.learner.model(), self.settings.roles)

    def set_roles(self, roles: Roles) -> None:
        """Give special tokens roles (no retraining); RoleError, and nothing changed, for a role
        naming a token that is not one of the special tokens."""
        roles = Roles.of(roles).check(self.settings.role_tokens)
        self.settings = self.settings.with_(roles=roles)

    def _replaying(self) -> int:
        return self.learner.replaying if isinstance(self.learner, Replaying) else 0

    # -- stepping --------------------------------------------------------------------------
    def step(self):
        """One step; its record, or None when nothing is left."""
        with self.lock:
            return self.learner.step()

    def step_many(self, n: int) -> int:
        """Up to n steps; how many were made. Unigram stops at the target, as a run does: a
        round past it prunes what the target keeps (course rounds would go on to the characters)."""
        with self.lock:
            learner, target = self.learner, self.settings.target
            shrinks = kind_of(learner).stops_at_target
            if shrinks and _at_target(learner, target):
                return 0
            done = 0
            for _ in learner.run(merges=n):
                done += 1
                if shrinks and _at_target(learner, target):
                    break
            return done

    def undo(self):
        with self.lock:
            return self.learner.undo()

    def undo_all(self) -> int:
        with self.lock:
            n = 0
            while self.learner.undo() is not None:
                n += 1
            return n

    def undo_to(self, steps: int) -> int:
        """Undo until `steps` steps remain; how many were undone."""
        with self.lock:
            n = 0
            while len(self.learner.history) > max(0, steps) and self.learner.undo() is not None:
                n += 1
            return n

    def set_target(self, vocab_size: int) -> None:
        """Raises TrainingError for a size below the base vocabulary."""
        with self.lock:
            self.learner.steps_for_vocab(vocab_size)
        self.settings = self.settings.with_(target=vocab_size)

    def steps_to_target(self) -> int:
        """Steps a run would make: to the target, or to the end of a replay if one is going."""
        with self.lock:
            todo = self.learner.steps_for_vocab(self.settings.target)
            replaying = self._replaying()
            return min(todo, replaying) if replaying else todo

    def run(self, view: View = View(), cancelled: Callable[[], bool] = lambda: False,
            frame: float = FRAME, on_step: Callable[[int], None] | None = None
            ) -> Generator[RunProgress, None, RunFinished]:
        """Step to the target (or to the end of a replay), yielding progress every `frame`
        seconds; the generator's return value says why it stopped. Stops between two steps
        when `cancelled()` turns true, or when the caller stops asking."""
        todo = self.steps_to_target()
        replay_ends = bool(self._replaying()) and self._replaying() <= todo
        done = 0
        started = last = time.monotonic()
        try:
            while done < todo:
                if cancelled():
                    return RunFinished(FinishReason.CANCELLED, done)
                with self.lock:
                    record = self.learner.step()
                if record is None:
                    return RunFinished(FinishReason.EXHAUSTED, done)
                done += 1
                if on_step is not None:
                    on_step(done)
                now = time.monotonic()
                if now - last >= frame:
                    last = now
                    yield RunProgress(done, todo, done / (now - started), self.snapshot(view))
        except MemoryError:
            return RunFinished(FinishReason.FAILED, done, "out of memory while training")
        return RunFinished(FinishReason.REPLAYED if replay_ends else FinishReason.TARGET, done)

    # -- files -----------------------------------------------------------------------------
    def inputs(self) -> list[str]:
        """Every file this session was read from: the corpus's documents, the count file, the
        inspected or replayed model. No save, export or batch may write over one of them."""
        found = [d.name for d in self.corpus.documents]
        return found + [p for p in (self.count_file, self.inspected, self.replay_source) if p is not None]

    def check_output(self, path: str | Path, fmt: str | None = None) -> None:
        """Before anything is written: the CLI's rule (`formats.atomic.check_output`), refusing
        with an OutputError an output that is one of `inputs()` or cannot be written safely.
        `fmt` names an export format (tiktoken also writes OUT.json)."""
        check_export_outputs(fmt, Path(path).expanduser(), self.inputs())

    def save(self, path: str | Path) -> Path:
        """Write the model atomically; from then on it counts as saved."""
        path = Path(path).expanduser()
        self.check_output(path)
        with self.lock:
            model = with_roles(self.learner.model(), self.settings.roles)
            key = self._key()
            corpus = self.learner.corpus_summary()
        modelfile.save(model, path, corpus)
        self._saved_key = key
        return path

    def check_export(self, fmt: str) -> list[str]:
        """What `fmt` would change harmlessly; raises ExportError for what it cannot carry."""
        return check(self.model(), fmt)

    def export(self, fmt: str, path: str | Path) -> list[str]:
        self.check_output(path, fmt)
        return export(self.model(), fmt, Path(path).expanduser())

    def export_history(self, path: str | Path) -> Path:
        """The history as CSV, as the kind writes it (BPE: the merges; Unigram: the rounds),
        written atomically; TrainingError for a kind with no history."""
        self.check_output(path)
        with self.lock:
            kind = kind_of(self.learner)
            if kind.history_csv is None:
                raise TrainingError(f"a {kind.noun} has no training history to export")
            return kind.history_csv(self.learner, Path(path).expanduser())

    # -- replay ----------------------------------------------------------------------------
    def replay(self, model: Model, source: str) -> int:
        """Make the next steps replay `model` on this corpus, as its kind replays (BPE: everything
        undone, then its merges; Unigram: its vocabulary is round 0, the rounds after it prune
        it); returns how many steps were undone."""
        kind = kind_of(self.learner)
        if kind.replay is None:
            raise TrainingError(f"a {kind.noun} is not trained: there is nothing to replay into")
        with self.lock:
            undone = len(self.learner.history)
            self.learner = kind.replay(self.learner, model, self.settings)
        self.replay_source = source
        return undone


def _counted_stats(counts: ChunkCounts) -> CorpusStats:
    """A count file's corpus summary; its distinct characters are those of its chunks."""
    distinct: set[str] = set()
    for chunk in counts.chunks:
        distinct.update(chunk)
    return CorpusStats(counts.documents, counts.chars, counts.bytes, len(distinct))


def _at_target(learner, target: int) -> bool:
    """Whether a kind whose steps shrink the vocabulary has no step left towards `target` (em's
    last round finalizes whatever the size); a loaded tokenizer makes none."""
    try:
        return learner.steps_for_vocab(target) == 0
    except TrainingError:
        return True
