"""`tokworkbench train PATH... (--vocab-size N | --merges N) -o MODEL.json`: any trainable kind,
from files or from a count file, through the session's Settings and the kind's learner."""

import argparse
import sys
import time

from tokworkbench.cli.options import (
    Progress,
    check_own_tokens,
    emit,
    note,
    role_options,
    roles_from,
    settings_from,
    stdout,
    training_options,
)
from tokworkbench.core.errors import CountFileError, ExportError, TrainingError
from tokworkbench.core.files.atomic import check_output
from tokworkbench.core.files.countfile import read_counts
from tokworkbench.core.formats.hf_bpe import check_hf_specials
from tokworkbench.core.gcpause import collector_paused
from tokworkbench.core.models.roles import with_roles
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.kinds import BPE, UNIGRAM, kind_named
from tokworkbench.core.session.settings import CUSTOM, Settings
from tokworkbench.core.text.blocks import count_files
from tokworkbench.core.text.corpus import Skipped, iter_documents, list_files, require_text
from tokworkbench.core.text.pretokenize import parse_split
from tokworkbench.core.text.samples import sample_paths

FLAGS = frozenset({"replace_invalid", "split"})


def add_parser(sub) -> argparse.ArgumentParser:
    tr = sub.add_parser("train", help="train a BPE, Unigram or SentencePiece BPE model on files or folders")
    training_options(tr)
    size = tr.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=int, metavar="N", help="target vocabulary size, specials included")
    size.add_argument("--merges", type=int, metavar="N", help="number of merges (Unigram: of pruning rounds)")
    tr.add_argument("--replace-invalid", action="store_true", help="replace bytes that are not UTF-8 with U+FFFD")
    tr.add_argument("-o", "--output", required=True, metavar="MODEL.json")
    tr.add_argument("--from-counts", metavar="COUNTS", help="train from a count file (`tokworkbench count`) "
                    "instead of PATHs; it fixes --split and --normalize")
    role_options(tr)  # a role's token becomes a special token if --special does not name it
    tr.set_defaults(split=None, normalize=None)  # None: not given, so --from-counts can tell a conflict
    return tr


def run(args) -> int:
    kind = kind_named(args.kind)
    check_own_tokens(kind, args.special, roles_from(args))  # in this command's words, before any work
    if args.from_counts:
        if args.paths:
            raise TrainingError("give PATHs or --from-counts, not both: the count file already holds the corpus")
        if args.replace_invalid:
            raise TrainingError("--replace-invalid has no effect with --from-counts; give it to `count` instead")
        inputs = [args.from_counts]
        settings = paths = None  # the count file fixes them
    else:
        settings = settings_from(args)  # a bad flag fails before the corpus is listed
        paths = args.paths or sample_paths()
        inputs = [f for f, _ in list_files(paths)]
    check_output(args.output, inputs)  # before the run, not after it
    stdout()
    started = time.perf_counter()
    report = Skipped()
    progress = Progress(kind.steps) if sys.stderr.isatty() else None
    with collector_paused():  # nothing a run makes is garbage until it ends, and the collector's passes over
        # the counting's and the learner's many objects cost 40-80 ms once it was back on for the writing
        settings, texts, counted = _corpus(args, kind, settings, paths, report)
        learner = settings.learner(texts, counted=counted)
        require_text(learner.chars)
        todo = learner.steps_for_vocab(args.vocab_size) if args.vocab_size is not None else args.merges
        for line in report.lines():
            note(line)
        seeded = learner.vocab_size
        for _ in learner.run(vocab_size=args.vocab_size, merges=args.merges):
            if progress:
                progress.update(len(learner.history), todo)
        if progress:
            progress.close()
        done = len(learner.history)
        if not kind.stops_at_target and done < todo:
            note(f"stopped after {done} {kind.steps}: no pair is left to merge")
        model = with_roles(learner.model(), settings.roles)
        if kind.takes_special_tokens:
            _note_hf_collisions(model)
        summary = SUMMARIES.get(kind, _summary)(learner, settings, seeded)
        corpus = learner.corpus_summary()
        # this frees the training state (flat store, index, heap) before the model is written:
        # writing was the run's peak
        del learner
        modelfile.save(model, args.output, corpus)
    emit(f"{summary} in {time.perf_counter() - started:.2f}s; wrote {args.output}")
    return 0


def _corpus(args, kind, settings, paths, report: Skipped):
    """The settings, and the corpus as texts or as counted chunks: a count file's, which fixes the
    normalizer and the pre-tokenizer; the documents themselves where the kind fits a setting to
    them (Unigram's course seed to the distinct characters, as the workbench fits it); else the
    files read and counted a block at a time on every core (a whole file as one str was most of
    the peak memory)."""
    if args.from_counts and kind.trains_on_lines(settings_from(args)):
        raise TrainingError(f"this {kind.noun} trains on the text's lines, as spm_train does; a count file "
                            "holds chunks: give the PATHs instead")
    if args.from_counts:
        counted, normalizer, pre = read_counts(args.from_counts)
        fixed = _counted_settings(args, normalizer, pre)
        return settings_from(args).with_(**fixed), [], counted
    errors = "replace" if args.replace_invalid else "strict"
    if kind.trains_on_lines(settings):
        return settings, [d.text for d in iter_documents(paths, errors, [], report=report)], None
    if kind.fit is not None and args.seed_size is None and args.algorithm == "course":
        texts = [d.text for d in iter_documents(paths, errors, [], report=report)]
        return settings.fitted(len(set().union(*map(set, texts))), ("seed_size",)), texts, None
    return settings, [], count_files(paths, settings.normalizer, settings.pre_tokenizer(), errors, [], report)


def _counted_settings(args, normalizer: str, pre) -> dict:
    """The count file fixes the normalizer and the pre-tokenizer: a flag that says otherwise is
    an error rather than silently ignored."""
    asked = parse_split(args.split) if args.split is not None else None
    if asked is not None and asked != pre:
        shown = f"--split regex:{pre.pattern}" if pre.name == CUSTOM else f"--split {pre.name}"
        raise CountFileError(f"--split {args.split} conflicts with {args.from_counts}, which was counted with "
                             f"{shown}; leave --split out")
    if args.normalize is not None and args.normalize != normalizer:
        raise CountFileError(f"--normalize {args.normalize} conflicts with {args.from_counts}, which was counted "
                             f"with --normalize {normalizer}; leave --normalize out")
    return {"normalizer": normalizer, **Settings.split_of(pre)}


def _note_hf_collisions(model) -> None:
    """A special token named like a learned token is fine here and in tiktoken, but HF cannot
    hold it; say so now rather than at export time."""
    try:
        check_hf_specials(model)
    except ExportError as exc:
        note(f"note: this model cannot be exported to HF: {exc}")


def _summary(learner, settings, seeded: int) -> str:
    kind = kind_named(settings.kind)
    return (f"trained {kind.count(len(learner.history))}, vocabulary {learner.vocab_size}, {learner.initial_tokens:,} -> "
            f"{learner.total_tokens:,} tokens ({learner.compression:.3f} {learner.config.units}s/token)")


def _bpe_summary(learner, settings, seeded: int) -> str:
    return (f"trained {len(learner.merges)} merges, vocabulary {learner.vocab_size}, {learner.initial_tokens:,} -> "
            f"{learner.total_tokens:,} tokens ({learner.compression:.3f} {settings.units}s/token)")


def _unigram_summary(learner, settings, seeded: int) -> str:
    metas = learner.metas
    held = ", ".join(metas) if len(metas) <= 3 else f"{len(metas)} meta, symbol and byte pieces"
    return (f"trained {len(learner.history)} rounds ({settings.algorithm}), vocabulary {seeded} -> "
            f"{learner.vocab_size} ({held} included), loss {learner.loss:.6g}, {learner.initial_tokens:,} -> {learner.total_tokens:,} tokens "
            f"({learner.compression:.3f} chars/token)")


SUMMARIES = {BPE: _bpe_summary, UNIGRAM: _unigram_summary}  # how this command reports each kind's run
