"""The command line: train, encode, decode, inspect — thin wrappers over the same core the app uses.

With no sub-command it starts the workbench. Every failure prints one line and exits 1 (argument
errors exit 2 with the usage, as argparse does). Outputs are checked before any work: a bad
`-o` never wastes a training run, and nothing is written over one of the command's inputs.
"""

import argparse
import dataclasses
import glob
import json
import math
import os
import signal
import sys
import time
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from tokworkbench.core.errors import Terminated
from tokworkbench.core.registry import modelfile
from tokworkbench.core.text.corpus import (
    Skipped, decode_document, describe_size, iter_documents, list_files, read_capped, read_document,
)
from tokworkbench.core.text.samples import sample_paths
from tokworkbench.core.errors import (
    CorpusError, ExportError, InvalidUtf8Error, NeedsPatternError, OutputError, TokWorkbenchError, TrainingError,
)
from tokworkbench.core.files.atomic import check_output
from tokworkbench.core.registry.export import FORMATS
from tokworkbench.core.registry.export import check_export_outputs, export
from tokworkbench.core.formats.hf_bpe import check_hf_specials
from tokworkbench.core.errors import InvalidUtf8DecodeError, TokenLimitError
from tokworkbench.core.errors import ClusterError, CountFileError
from tokworkbench.core.files.countfile import read_counts, write_counts
from tokworkbench.core.text.blocks import count_files
from tokworkbench.core.text.corpus import require_text
from tokworkbench.core.bpe.gcpause import collector_paused
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES
from tokworkbench.core.registry.load import model_inputs, open_model
from tokworkbench.core.formats.presets import is_preset, preset_named, preset_ranks
from tokworkbench.core.errors import ModelFileError, SettingError
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.text.pretokenize import parse_split
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS
from tokworkbench.serve import MAX_SESSIONS
from tokworkbench.core.bpe.trainer import TrainConfig, Trainer, train
from tokworkbench.core.files.historycsv import write_history_csv, write_rounds_csv
from tokworkbench.core.unigram.learner import ALGORITHMS, EM_SEED_SIZE, UnigramConfig, UnigramLearner
from tokworkbench.core.unigram.sampling import unigram_nbest, unigram_sample
from tokworkbench.core.inspection.escape import json_printable, printable, quote
from tokworkbench.core.registry.kinds import TRAINABLE
from tokworkbench.core.session.settings import CUSTOM, DEFAULT_TARGET, FIT, Settings
from tokworkbench.core.inspection.roundtrip import parse_ids
from tokworkbench.engines.remote import is_url
from tokworkbench.core.models.roles import decode as decode_ids, encode_document, with_boundaries, with_roles
from tokworkbench.core.compat import fingerprint
from tokworkbench.commands import MODULES as COMMAND_MODULES
from tokworkbench.commands.common import add_role_options, roles_from

PROG = "tokworkbench"
SPLIT_CHOICES = "{none,gpt2,gpt4,o200k,metaspace,regex:PATTERN}"
MAX_STDIN_BYTES = 1 << 30  # encode -f - reads standard input up to this


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A workbench for byte-pair-encoding tokenizers. Without a command, opens the "
        "workbench on PATHs (or on the embedded sample texts).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    app = sub.add_parser("app", help="open the workbench (the default)")
    _workbench_options(app)

    tr = sub.add_parser("train", help="train a BPE or Unigram model on files or folders")
    _training_options(tr)
    size = tr.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=int, metavar="N", help="target vocabulary size, specials included")
    size.add_argument("--merges", type=int, metavar="N", help="number of merges (Unigram: of pruning rounds)")
    tr.add_argument("--replace-invalid", action="store_true", help="replace bytes that are not UTF-8 with U+FFFD")
    tr.add_argument("-o", "--output", required=True, metavar="MODEL.json")
    tr.add_argument("--from-counts", metavar="COUNTS", help="train from a count file (`tokworkbench count`) "
                    "instead of PATHs; it fixes --split and --normalize")
    add_role_options(tr)  # a role's token becomes a special token if --special does not name it
    tr.set_defaults(split=None, normalize=None)  # None: not given, so --from-counts can tell a conflict

    cnt = sub.add_parser("count", help="pre-tokenize and count chunks into a count file, here or on a Dask cluster")
    cnt.add_argument("paths", nargs="*", metavar="PATH",
                     help="files, folders or glob patterns (default: the sample texts); each file is one document")
    cnt.add_argument("--split", default="gpt4", metavar=SPLIT_CHOICES, help="pre-tokenizer (default: gpt4)")
    cnt.add_argument("--normalize", choices=NORMALIZERS, default="none")
    cnt.add_argument("--replace-invalid", action="store_true", help="replace bytes that are not UTF-8 with U+FFFD")
    cnt.add_argument("--engine", choices=("local", "dask"), default="local",
                     help="local: this machine's cores; dask: the cluster at --scheduler (pip install 'tokworkbench[dask]')")
    cnt.add_argument("--scheduler", metavar="ADDRESS", help="the Dask scheduler, e.g. tcp://10.0.0.5:8786")
    cnt.add_argument("--task-mb", type=int, default=64, metavar="N",
                     help="megabytes of text per Dask task (default: 64; preset patterns only)")
    cnt.add_argument("-o", "--output", required=True, metavar="COUNTS")

    enc = sub.add_parser("encode", help="encode text with a model")
    enc.add_argument("-m", "--model", required=True)
    src = enc.add_mutually_exclusive_group(required=True)
    src.add_argument("text", nargs="?")
    src.add_argument("-f", "--file", help="a UTF-8 text file, or - for standard input")
    enc.add_argument("--format", choices=("ids", "tokens", "json"), default="ids")
    enc.add_argument("--allow-special", action="store_true", help="encode special-token strings as special ids")
    enc.add_argument("--add-special", action="store_true",
                     help="encode as a document: BOS + text + EOS (each once) where the model has those roles")
    enc.add_argument("--nbest", type=int, metavar="K", help="Unigram: the K best segmentations, best first")
    enc.add_argument("--sample", action="store_true",
                     help="Unigram: draw a segmentation (subword regularization), p(path)^ALPHA")
    enc.add_argument("--alpha", type=float, default=0.1, help="Unigram --sample smoothing (default: 0.1)")
    enc.add_argument("--seed", type=int, help="Unigram --sample: random seed, for a repeatable draw")
    _model_options(enc)

    dec = sub.add_parser("decode", help="decode ids with a model")
    dec.add_argument("-m", "--model", required=True)
    dec.add_argument("ids", nargs="+", metavar="ID")
    dec.add_argument("--errors", choices=("strict", "replace"), default="strict")
    dec.add_argument("--skip-special", action="store_true", help="leave out BOS, EOS and PAD (UNK stays)")
    _model_options(dec)

    ins = sub.add_parser("inspect", help="summarize a model: ours, HF tokenizer.json, .tiktoken or minbpe .model")
    ins.add_argument("model")
    ins.add_argument("--history-csv", metavar="FILE", help="also write the training history as CSV")
    _model_options(ins)

    srv = sub.add_parser(
        "serve", help="serve the workbench as a web page (needs the extra: pip install 'tokworkbench[serve]')",
        description="Serve the workbench as a web page: each browser session opens its own workbench on "
        "PATHs with these settings, running as you. It prints the URL to open, with a random token that "
        "every request needs. It listens on 127.0.0.1 (this machine only); from another machine, open an "
        "SSH tunnel (ssh -L 8000:localhost:8000 HOST) and browse to the printed URL.",
    )
    _workbench_options(srv)
    srv.add_argument("--host", default="127.0.0.1",
                     help="address to listen on (default: 127.0.0.1; reach it through an SSH tunnel, "
                     "ssh -L 8000:localhost:8000 HOST, rather than listening on a public address)")
    srv.add_argument("--allow-insecure-host", action="store_true",
                     help="let --host be an address other machines can reach (0.0.0.0, a LAN address): anyone "
                     "who reaches the port and learns the token, which HTTP sends in clear, runs the workbench as you")
    srv.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    srv.add_argument("--max-sessions", type=int, default=MAX_SESSIONS, metavar="N",
                     help=f"browser sessions open at once (default: {MAX_SESSIONS}; each runs two processes)")
    srv.add_argument("--public-url", metavar="URL",
                     help="the address the browser uses, where it is not http://HOST:PORT "
                     "(a tunnel to another local port: ssh -L 9000:localhost:8000 HOST needs http://localhost:9000)")

    exp = sub.add_parser("export", help="write a model as HF tokenizer.json, tiktoken ranks, or minbpe .model")
    exp.add_argument("-m", "--model", required=True)
    exp.add_argument("--format", choices=FORMATS, required=True)
    exp.add_argument("-o", "--output", required=True)
    _model_options(exp)
    for module in COMMAND_MODULES.values():
        module.add_parser(sub)
    return parser


def _workbench_options(parser: argparse.ArgumentParser) -> None:
    """The workbench's settings (`app`, and `serve`, which passes them on to each session)."""
    _training_options(parser)
    parser.add_argument("--target", type=int, default=None, metavar="N",
                        help=f"target vocabulary size for r (default: {DEFAULT_TARGET}; Unigram: one the corpus's "
                        "characters leave room for)")
    parser.add_argument("-m", "--inspect", metavar="NAME|FILE", dest="model",
                        help="inspect a tokenizer instead of training one: a preset (cl100k_base, o200k_base, "
                        "gpt2) or any model file this tool reads; --split and --special NAME=ID then apply to it "
                        "(--model bpe|unigram is the kind a training session learns)")
    add_role_options(parser)  # as `train` takes them, so the settings dialog's train command reads back
    parser.set_defaults(split=None)  # gpt4 for training; with -m, a preset or companion brings its own


def _model_options(parser: argparse.ArgumentParser) -> None:
    """What every command that reads a model accepts."""
    parser.add_argument("--split", metavar=SPLIT_CHOICES,
                        help="pattern for a bare .tiktoken file (one without its OUT.json companion)")
    parser.add_argument("--max-token-bytes", type=int, default=MAX_TOKEN_BYTES, metavar="N",
                        help=f"refuse a model with a token longer than N bytes (default: {MAX_TOKEN_BYTES})")
    parser.add_argument("--special", action="append", default=[], metavar="NAME=ID", dest="special_ids",
                        help="a special token of .tiktoken ranks or a preset, with its id "
                        "(e.g. '<|endoftext|>=100257'); may be repeated")


def _special_ids(items: list[str]) -> dict[str, int]:
    """--special NAME=ID, each split at its last '=' (a name may hold '=')."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, tid = item.rpartition("=")
        if not sep or not name or not (tid.isascii() and tid.isdigit()):
            raise ModelFileError(f"--special {item!r} is not NAME=ID (e.g. '<|endoftext|>=100257')")
        if name in out:
            raise ModelFileError(f"--special gives {name!r} twice")
        out[name] = int(tid)
    return out


def _training_options(parser: argparse.ArgumentParser) -> None:
    """What `train` and the workbench share: the corpus and how it is cut and merged."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the sample texts)")
    parser.add_argument("--units", choices=("byte", "char"), default="byte")
    parser.add_argument("--split", default="gpt4", metavar=SPLIT_CHOICES,
                        help="pre-tokenizer preset, or a custom regex written regex:PATTERN (default: gpt4)")
    parser.add_argument("--normalize", choices=NORMALIZERS, default="none")
    parser.add_argument("--tie-break", choices=TIE_BREAKS, default="first")
    parser.add_argument("--special", nargs="+", default=[], metavar="TOKEN", help="special tokens, e.g. '<|endoftext|>'")
    uni = parser.add_argument_group("Unigram", "with --model unigram (units are characters; <unk> is id 0)")
    uni.add_argument("--model", choices=TRAINABLE, default="bpe", dest="model_kind",
                     help="bpe (the default) or unigram")
    uni.add_argument("--algorithm", choices=ALGORITHMS, default="course",
                     help="course: the HF course's pruning, step by step; em: SentencePiece-style EM (default: course)")
    uni.add_argument("--seed-size", type=int, default=None, metavar="N",
                     help="seed pieces, characters included (default: 300 for course, or about twice the corpus's "
                     "distinct characters where it has more; 1000000 for em, SentencePiece's default)")
    uni.add_argument("--prune-fraction", type=float, default=0.1, metavar="F",
                     help="course: share of the vocabulary one round removes (default: 0.1)")
    uni.add_argument("--shrinking-factor", type=float, default=0.75, metavar="F",
                     help="em: share of the vocabulary one round keeps (default: 0.75)")
    uni.add_argument("--sub-iterations", type=int, default=2, metavar="N", help="em: EM iterations a round (default: 2)")
    uni.add_argument("--max-piece-length", type=int, default=16, metavar="N", help="longest seed piece (default: 16)")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or (argv[0] not in ("train", "count", "encode", "decode", "inspect", "export", "app", "serve",
                                    *COMMAND_MODULES, "-h", "--help")):
        argv = ["app", *argv]
    args = build_parser().parse_args(argv)
    if args.command not in ("app", "serve"):  # (Textual answers its own signals)
        signal.signal(signal.SIGTERM, _terminated)
    try:
        status = COMMANDS[args.command](args)
        _flush_stdout()
        return status
    except TokWorkbenchError as exc:
        print(printable(f"{PROG}: error: {_advice(exc, args)}"), file=sys.stderr)  # it may quote a file
        module = COMMAND_MODULES.get(args.command)
        return getattr(module, "ERROR_STATUS", 1)  # compare keeps 1 for its answer "incompatible"
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{PROG}: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:  # the reader went away (| head): quiet, but not a success
        _silence_stdout()
        return 141


def _terminated(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: the unwinding must not be cut short
    raise Terminated()


def _advice(exc: TokWorkbenchError, args) -> str:
    """The core's message, plus the flag that helps where this command has one."""
    text = str(exc)
    if isinstance(exc, SettingError):
        text = exc.worded("--" + exc.setting.replace("_", "-"))
    elif isinstance(exc, InvalidUtf8Error) and getattr(args, "replace_invalid", None) is False:
        text += ", or load it with U+FFFD in place of bad bytes (--replace-invalid)"
    elif isinstance(exc, NeedsPatternError) and hasattr(args, "split"):
        text += " with --split"
    elif isinstance(exc, TokenLimitError) and hasattr(args, "max_token_bytes"):
        text += " with --max-token-bytes N"
    elif isinstance(exc, InvalidUtf8DecodeError) and hasattr(args, "errors"):
        text = exc.worded("--errors replace")
    return text


def _stdout():
    """Standard output, or an error if the shell started us with it closed (`>&-`)."""
    if sys.stdout is None:
        raise OutputError("cannot write to standard output: it is closed")
    return sys.stdout


def _emit_raw(text: str) -> None:
    with _writing_stdout():
        _stdout().write(text + "\n")


def _emit(text: str) -> None:
    """A report: a string from a model file (a pattern, a token, a name) must not drive the
    terminal, so every control character but the line end is escaped (escape.printable)."""
    _emit_raw(printable(text))


def _emit_json(text: str) -> None:
    """JSON: the same rule in JSON's own escapes, so it stays the same JSON."""
    _emit_raw(json_printable(text))


emit, emit_json = _emit, _emit_json  # for the command modules (commands/)


def _flush_stdout() -> None:
    """Flush inside the error handling: a full disk must fail here, not silently at exit."""
    if sys.stdout is not None:
        with _writing_stdout():
            sys.stdout.flush()


@contextmanager
def _writing_stdout():
    """A failed write to stdout (/dev/full, a bad descriptor) as an OutputError; a broken pipe
    passes through, since the reader leaving is not an error worth a message."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        _silence_stdout()
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's own flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


def cmd_app(args) -> int:
    settings = app_settings(args)  # checked here: a bad pattern is one line, not a screen
    if args.model and is_preset(args.model):
        # found and hash-checked here (a missing file is one line); parsed in the app's load
        # worker, with the screen up, since a cold parse takes seconds
        preset_ranks(preset_named(args.model))
        _special_ids(args.special)
        model = partial(_app_model, args)
    else:
        model = _app_model(args)  # read here too: a bad model file is one line
    from tokworkbench.app import run_app  # Textual is imported only when the app is wanted

    return run_app(args.paths, settings, (model, args.model) if model is not None else None)


def _app_model(args):
    """The model `-m` names, read as the model commands read it (--special is NAME=ID here)."""
    if not args.model:
        return None
    return _load(argparse.Namespace(special_ids=args.special, max_token_bytes=MAX_TOKEN_BYTES, split=args.split),
                 args.model)


def cmd_serve(args) -> int:
    """The workbench in a browser: checked here as `app` checks it, then each session runs `app`."""
    app_settings(args)  # a bad flag is one line now, not a broken page in every session
    _app_model(args)
    from tokworkbench import serve  # textual-serve is imported only when a server is wanted

    return serve.serve(serve.app_command(args), args.host, args.port, args.public_url,
                       allow_insecure=args.allow_insecure_host, max_sessions=args.max_sessions)


def app_settings(args) -> Settings:
    """The workbench's settings from its command line, so a session can be reproduced; a
    missing path or a bad pattern is one line before any screen or server starts."""
    for path in args.paths:
        if not Path(path).exists():
            raise CorpusError(f"{path}: no such file or folder")
    pre = parse_split(args.split or "gpt4")
    split, pattern = (CUSTOM, pre.pattern) if pre.name == "custom" else (pre.name, None)
    inspecting = bool(getattr(args, "model", None))
    roles = roles_from(args)
    if inspecting and roles:
        raise TrainingError("--bos/--eos/--pad/--unk set a trained model's roles; a model opened with -m "
                            "keeps its own")
    if inspecting:
        specials = ()
    else:  # Unigram's roles name its own <unk>; its config refuses any --special
        specials = tuple(args.special) if args.model_kind == "unigram" else _train_specials(args)
    target = DEFAULT_TARGET if args.target is None else args.target
    # what is not given is fitted to the corpus once it is read (a Unigram keeps every character)
    fit = tuple(name for name, given in zip(FIT, (args.seed_size, args.target)) if given is None)
    settings = Settings(units=args.units, normalizer=args.normalize, split=split, pattern=pattern,
                        tie_break=args.tie_break, target=target, special_tokens=specials, roles=roles,
                        fit=fit, **_unigram_settings(args))
    settings.config()
    if target < 1:
        raise TrainingError(f"--target {args.target} makes no sense; a vocabulary has at least the base units")
    return settings


def _unigram_settings(args) -> dict:
    return {"kind": args.model_kind, "algorithm": args.algorithm, "seed_size": _seed_size(args),
            "prune_fraction": args.prune_fraction, "shrinking_factor": args.shrinking_factor,
            "sub_iterations": args.sub_iterations, "max_piece_length": args.max_piece_length}


def _seed_size(args) -> int:
    if args.seed_size is not None:
        return args.seed_size
    return EM_SEED_SIZE if args.algorithm == "em" else 300


def _unigram_config(args, normalizer: str, pre) -> UnigramConfig:
    if args.special:
        raise TrainingError("a Unigram model's one special token is <unk> (id 0); --special is for BPE")
    roles = roles_from(args)
    other = [(r, t) for r, t in roles.items() if (r, t) != ("unk", "<unk>")]
    if other:
        role, token = other[0]
        raise TrainingError(f"--{role} {token}: a Unigram model's one special token is <unk> (id 0), which can "
                            "take only the unk role (--unk '<unk>'); bos, eos and pad need BPE or a fixed vocabulary")
    return UnigramConfig(normalizer, pre, args.algorithm, _seed_size(args), args.prune_fraction,
                         args.shrinking_factor, args.sub_iterations, args.max_piece_length)


def cmd_train(args) -> int:
    if args.from_counts:
        return _train_from_counts(args)
    if args.model_kind == "unigram":
        return _train_unigram(args)
    config = TrainConfig(
        units=args.units,
        normalizer=args.normalize or "none",
        pre_tokenizer=parse_split(args.split or "gpt4"),
        tie_break=args.tie_break,
        special_tokens=_train_specials(args),
    )
    paths = args.paths or sample_paths()
    check_output(args.output, [f for f, _ in list_files(paths)])  # before the run, not after it
    _stdout()
    errors = "replace" if args.replace_invalid else "strict"
    skipped: list[str] = []
    report = Skipped()
    started = time.perf_counter()
    progress = _Progress() if sys.stderr.isatty() else None
    # files are read a block at a time: a whole file as one str was most of the peak memory
    count = partial(count_files, paths, config.normalizer, config.pre_tokenizer, errors, skipped, report)
    return _finish_training(args, train([], config, vocab_size=args.vocab_size, merges=args.merges,
                                        on_step=progress.update if progress else None, count=count),
                            report, started, progress)


def _train_from_counts(args) -> int:
    """`train --from-counts`: the count file fixes the normalizer and the pre-tokenizer."""
    if args.paths:
        raise TrainingError("give PATHs or --from-counts, not both: the count file already holds the corpus")
    if args.replace_invalid:
        raise TrainingError("--replace-invalid has no effect with --from-counts; give it to `count` instead")
    check_output(args.output, [args.from_counts])  # before the run, not after it
    _stdout()
    started = time.perf_counter()
    counted, normalizer, pre = read_counts(args.from_counts)
    asked = parse_split(args.split) if args.split is not None else None
    if asked is not None and asked != pre:
        raise CountFileError(f"--split {args.split} conflicts with {args.from_counts}, which was counted with "
                             f"{_split_name(pre)}; leave --split out")
    if args.normalize is not None and args.normalize != normalizer:
        raise CountFileError(f"--normalize {args.normalize} conflicts with {args.from_counts}, which was counted "
                             f"with --normalize {normalizer}; leave --normalize out")
    if args.model_kind == "unigram":
        return _run_unigram(args, _unigram_config(args, normalizer, pre), [], counted, Skipped(), started)
    config = TrainConfig(units=args.units, normalizer=normalizer, pre_tokenizer=pre, tie_break=args.tie_break,
                         special_tokens=_train_specials(args))
    progress = _Progress() if sys.stderr.isatty() else None
    with collector_paused():
        trainer = Trainer([], config, counted=counted)
        require_text(trainer.chars)
        todo = trainer.steps_for_vocab(args.vocab_size) if args.vocab_size is not None else args.merges
        for _ in trainer.run(vocab_size=args.vocab_size, merges=args.merges):
            if progress:
                progress.update(len(trainer.merges), todo)
    return _finish_training(args, trainer, Skipped(), started, progress)


def _split_name(pre) -> str:
    return f"--split regex:{pre.pattern}" if pre.name == "custom" else f"--split {pre.name}"


def _finish_training(args, trainer, report: Skipped, started: float, progress) -> int:
    if progress:
        progress.close()
    for line in report.lines():
        print(f"{PROG}: {line}", file=sys.stderr)
    wanted = trainer.steps_for_vocab(args.vocab_size) + len(trainer.merges) if args.vocab_size else args.merges
    done = len(trainer.merges)
    if done < wanted:
        print(f"{PROG}: stopped after {done} merges: no pair is left to merge", file=sys.stderr)
    tok = with_roles(trainer.model(), roles_from(args))
    _note_hf_collisions(tok)
    summary = trainer.corpus_summary()
    result = (f"trained {done} merges, vocabulary {trainer.vocab_size}, {trainer.initial_tokens:,} -> "
              f"{trainer.total_tokens:,} tokens ({trainer.compression:.3f} {args.units}s/token)")
    # the caller passes the trainer on without keeping it, so this frees its training state
    # (flat store, index, heap) before the model is written: writing was the run's peak
    del trainer
    modelfile.save(tok, args.output, summary)
    elapsed = time.perf_counter() - started
    _emit(f"{result} in {elapsed:.2f}s; wrote {args.output}")
    return 0


def _train_unigram(args) -> int:
    config = _unigram_config(args, args.normalize or "none", parse_split(args.split or "metaspace"))
    paths = args.paths or sample_paths()
    check_output(args.output, [f for f, _ in list_files(paths)])  # before the run, not after it
    _stdout()
    errors = "replace" if args.replace_invalid else "strict"
    report = Skipped()
    started = time.perf_counter()
    docs = (d.text for d in iter_documents(paths, errors, [], report=report))
    if args.seed_size is None and args.algorithm == "course":  # fitted to the corpus, as the workbench fits it
        docs = list(docs)
        chars = len(set().union(*map(set, docs)))
        seed = Settings(kind="unigram", seed_size=config.seed_size).fitted(chars, ("seed_size",)).seed_size
        config = dataclasses.replace(config, seed_size=seed)
    return _run_unigram(args, config, docs, None, report, started)


def _run_unigram(args, config: UnigramConfig, docs, counted, report: Skipped, started: float) -> int:
    """Seed, then prune round by round to --vocab-size (or for --merges rounds), and save."""
    with collector_paused():
        learner = UnigramLearner(docs, config, counted=counted)
        require_text(learner.chars)
        if args.vocab_size is not None:
            learner.steps_for_vocab(args.vocab_size)  # a size below the characters fails before any round
        for line in report.lines():
            print(f"{PROG}: {line}", file=sys.stderr)
        seeded = learner.vocab_size
        progress = _Progress("rounds") if sys.stderr.isatty() else None
        todo = learner.steps_for_vocab(args.vocab_size) if args.vocab_size is not None else args.merges
        for row in learner.run(vocab_size=args.vocab_size, merges=args.merges):
            if progress:
                progress.update(row.round, todo)
    if progress:
        progress.close()
    model = with_roles(learner.model(), roles_from(args))
    modelfile.save(model, args.output, learner.corpus_summary())
    elapsed = time.perf_counter() - started
    _emit(f"trained {len(learner.history)} rounds ({config.algorithm}), {seeded} -> {learner.vocab_size} pieces "
          f"+ <unk>, loss {learner.loss:.6g}, {learner.initial_tokens:,} -> {learner.total_tokens:,} tokens "
          f"({learner.compression:.3f} chars/token) in {elapsed:.2f}s; wrote {args.output}")
    return 0


def cmd_count(args) -> int:
    """Pre-tokenize and count into a count file, here or on a Dask cluster."""
    pre = parse_split(args.split)
    if args.engine == "dask" and not args.scheduler:
        raise ClusterError("--engine dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
    if args.scheduler and args.engine != "dask":
        raise ClusterError("--scheduler is for --engine dask")
    if args.task_mb < 1:
        raise CorpusError(f"--task-mb {args.task_mb} makes no sense; give at least 1")
    paths = args.paths or sample_paths()
    urls = [p for p in paths if is_url(p)]
    if urls and args.engine != "dask":
        raise CorpusError(f"{urls[0]}: shards named by URL are read by the cluster: add --engine dask --scheduler ADDRESS")
    report = Skipped()
    files = _count_files(paths, report if args.engine == "dask" else Skipped())  # the local reader reports its own walk
    check_output(args.output, [f for f, _ in files if not is_url(str(f))])  # before the count, not after it
    _stdout()
    errors = "replace" if args.replace_invalid else "strict"
    started = time.perf_counter()
    if args.engine == "dask":
        try:
            from tokworkbench.engines import dask_count
        except ImportError as exc:
            raise ClusterError(f"--engine dask needs Dask: pip install 'tokworkbench[dask]' ({exc})") from None
        shards = dask_count.shards_of(files, report)
        counted = dask_count.count_dask(shards, args.normalize, pre, args.scheduler, errors,
                                        task_bytes=args.task_mb << 20)
    else:
        # a block at a time on every core, as train counts: no whole-file str
        counted = count_files(_expand_globs(paths), args.normalize, pre, errors, [], report)
    for line in report.lines():
        print(f"{PROG}: {line}", file=sys.stderr)
    require_text(counted.chars)
    write_counts(args.output, counted, args.normalize, pre)
    _emit(f"counted {int(counted.counts.sum()):,} chunks, {len(counted.chunks):,} distinct, in "
          f"{counted.documents:,} document{'' if counted.documents == 1 else 's'} ({counted.chars:,} chars) in {time.perf_counter() - started:.2f}s; "
          f"wrote {args.output}")
    return 0


def _count_files(paths: list[str], report: Skipped) -> list:
    """Local files (globs expanded) and URLs (listed through fsspec), in the order named."""
    from tokworkbench.engines.remote import list_urls

    out: list = []
    for p in paths:
        out += list_urls([p]) if is_url(p) else list_files(_expand_globs([p]), report)
    return out


def _expand_globs(paths: list[str]) -> list[str]:
    """A path that does not exist but holds a wildcard is a glob (for shells that pass it on)."""
    out: list[str] = []
    for p in paths:
        if not os.path.lexists(p) and any(c in p for c in "*?["):
            found = sorted(glob.glob(p, recursive=True))
            if not found:
                raise CorpusError(f"{p}: no file matches this pattern")
            out += found
        else:
            out.append(p)
    return out


def _special_tokens(specials: list[str]) -> tuple[str, ...]:
    """Special tokens from the command line, which must be text: a byte that is not UTF-8 reaches
    Python as a lone surrogate and would fail only when the trained model is saved."""
    for k, s in enumerate(specials, 1):
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as exc:
            raw = s.encode("utf-8", "surrogateescape")[exc.start : exc.start + 1].hex()
            raise TrainingError(f"special token {k} is not valid UTF-8 text (byte 0x{raw} at offset {exc.start}); "
                                "special tokens are text") from None
    return tuple(specials)


def _train_specials(args) -> tuple[str, ...]:
    """--special, then each role's token that --special does not name (so `--bos '<s>'` alone
    makes '<s>' a special token with that role)."""
    roles = roles_from(args)  # two roles on one token: an error before any work
    specials = _special_tokens(args.special + [t for t in roles.tokens if t not in args.special])
    return specials


def _note_hf_collisions(tok) -> None:
    """A special token named like a learned token is fine here and in tiktoken, but HF cannot
    hold it; say so now rather than at export time."""
    try:
        check_hf_specials(tok)
    except ExportError as exc:
        print(f"{PROG}: note: this model cannot be exported to HF: {exc}", file=sys.stderr)


def cmd_encode(args) -> int:
    tok = _load(args, args.model)
    if args.file == "-":
        text = decode_document("<stdin>", _read_stdin()).text
    elif args.file is not None:
        text = read_document(Path(args.file)).text
    else:
        text = args.text
    allowed = "all" if args.allow_special else ()
    if args.nbest is not None or args.sample:
        return _encode_unigram_options(args, tok, text)
    _note_no_boundaries(args, tok)
    ids = encode_document(tok, text, allowed, strict=True) if args.add_special else tok.encode(text, allowed_special=allowed)
    if args.format == "json" and tok.kind == "unigram":
        scores = [tok.score(i) for i in ids]
        _emit_json(json.dumps({"ids": ids, "tokens": [tok.token_text(i) for i in ids], "score": math.fsum(scores),
                          "scores": scores}, ensure_ascii=False))
        return 0
    if args.format == "ids":
        _emit(" ".join(map(str, ids)))
    elif args.format == "tokens":
        _emit_json(" ".join(json.dumps(tok.token_text(i), ensure_ascii=False) for i in ids))
    else:
        _emit_json(json.dumps({"ids": ids, "tokens": [tok.token_text(i) for i in ids]}, ensure_ascii=False))
    return 0


def _note_no_boundaries(args, tok) -> None:
    if args.add_special and not (tok.roles.bos or tok.roles.eos):
        print(f"{PROG}: note: {args.model} gives no token the bos or eos role; --add-special adds nothing",
              file=sys.stderr)


def _encode_unigram_options(args, tok, text: str) -> int:
    """--nbest K and --sample: Unigram's other segmentations of ordinary text. A special token's
    text in it is refused as encode refuses it (encode is run for that: the same check, the same
    message); --add-special frames each segmentation with BOS and EOS as encode does."""
    if tok.kind != "unigram":
        raise TrainingError(f"--nbest and --sample are for Unigram models; this {tok.kind} model has one segmentation")
    if args.nbest is not None and args.sample:
        raise TrainingError("give --nbest or --sample, not both")
    if args.allow_special:
        raise TrainingError("--nbest and --sample segment ordinary text; --allow-special does not apply to them")
    _note_no_boundaries(args, tok)
    if args.add_special:
        encode_document(tok, text, (), strict=True)
        roles = tok.roles  # the boundaries the text spells already are not segmented (encode_document's rule)
        if roles.bos is not None and text.startswith(roles.bos):
            text = text[len(roles.bos):]
        if roles.eos is not None and text.endswith(roles.eos):
            text = text[: len(text) - len(roles.eos)]
    else:
        tok.encode(text)
    if args.nbest is not None:
        if not 1 <= args.nbest <= 1000:
            raise TrainingError(f"--nbest {args.nbest} must be between 1 and 1000")
        found = unigram_nbest(tok, text, args.nbest)
    else:
        if not (math.isfinite(args.alpha) and args.alpha > 0):
            raise TrainingError(f"--alpha {args.alpha} must be a positive number")
        found = [(unigram_sample(tok, text, args.alpha, args.seed), None)]
    if args.add_special:
        found = [(with_boundaries(tok, ids), score) for ids, score in found]
    for ids, score in found:
        if args.format == "ids":
            _emit(" ".join(map(str, ids)))
        elif args.format == "tokens":
            _emit_json(" ".join(json.dumps(tok.token_text(i), ensure_ascii=False) for i in ids))
        else:
            total = math.fsum(tok.score(i) for i in ids) if score is None else score
            _emit_json(json.dumps({"ids": ids, "tokens": [tok.token_text(i) for i in ids], "score": total},
                             ensure_ascii=False))
    return 0


def _read_stdin(limit: int = MAX_STDIN_BYTES) -> bytes:
    if sys.stdin is None:
        raise CorpusError("cannot read standard input: it is closed")
    try:
        data = read_capped(sys.stdin.buffer, limit)
    except OSError as exc:
        raise CorpusError(f"cannot read standard input: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CorpusError(f"standard input holds more than {describe_size(limit)}; encode a file instead")
    return data


def _load(args, path: str):
    """A model file, or a preset by name (cl100k_base, o200k_base, gpt2) when no such file is here."""
    return open_model(path, args.split, args.max_token_bytes, _special_ids(args.special_ids))


def cmd_decode(args) -> int:
    tok = _load(args, args.model)
    ids = parse_ids(" ".join(args.ids))
    _emit_raw(decode_ids(tok, ids, skip_special=args.skip_special, errors=args.errors))  # the text asked for, as it is
    return 0


def cmd_export(args) -> int:
    check_export_outputs(args.format, args.output, model_inputs(args.model))  # before any work
    _stdout()
    tok = _load(args, args.model)
    for note in export(tok, args.format, args.output):
        _emit(note)
    return 0


def cmd_inspect(args) -> int:
    if args.history_csv:
        check_output(args.history_csv, model_inputs(args.model))
    tok = _load(args, args.model)
    if tok.kind == "unigram":
        return _inspect_unigram(args, tok)
    if tok.kind != "bpe":
        return _inspect_other(args, tok)
    pre = tok.pre_tokenizer
    lines = [
        f"model        {args.model}",
        f"units        {tok.units}",
        f"normalizer   {tok.normalizer}",
        f"pre-tokenizer {pre.name}" + (f"  {pre.pattern}" if pre.name == "custom" else ""),
        f"tie-break    {tok.tie_break}",
        f"vocabulary   {tok.vocab_size} = {tok.base_size} base + {len(tok.merges)} merges + {len(tok.special_tokens)} special",
    ]
    if tok.history and tok.history[-1].length > 0:
        last = tok.history[-1]
        first_len = tok.history[0].length + tok.history[0].replacements
        lines.append(f"training     {first_len:,} -> {last.length:,} tokens ({first_len / last.length:.3f}x)")
    show = 10
    if tok.merges:
        lines.append("first merges")
        lines += _merge_lines(tok, range(min(show, len(tok.merges))))
        if len(tok.merges) > show:
            lines.append("last merges")
            lines += _merge_lines(tok, range(max(show, len(tok.merges) - show), len(tok.merges)))
    if tok.special_tokens:
        lines.append("special tokens")
        lines += [f"  {i:>7}  {s}" + (f"  ({tok.roles.role_of(s)})" if tok.roles.role_of(s) else "")
                  for s, i in tok.special_ids.items()]
    lines.append(f"fingerprint  {fingerprint(tok)}")
    if args.history_csv:
        if not tok.history:
            raise TrainingError(f"{args.model} records no training history to write")
        first = tok.history[0]
        written = write_history_csv(args.history_csv, tok.history, tok.token_bytes, first.length + first.replacements)
        lines.append(f"wrote {len(tok.history):,} steps to {written}")
    _emit("\n".join(lines))
    return 0


def _inspect_unigram(args, tok) -> int:
    pre = tok.pre_tokenizer
    lines = [
        f"model        {args.model}",
        "kind         unigram" + (f" ({tok.algorithm})" if tok.algorithm else ""),
        "units        char",
        f"normalizer   {tok.normalizer_label}",
        f"pre-tokenizer {pre.name}" + (f"  {pre.pattern}" if pre.name == "custom" else ""),
        f"vocabulary   {tok.vocab_size} = {len(tok.specials)} special + {tok.base_size} single characters + "
        f"{tok.vocab_size - len(tok.specials) - tok.base_size} longer pieces"
        + (f" ({len(tok.user_defined)} user-defined)" if tok.user_defined else ""),
    ]
    if tok.start_cost:
        lines.append(f"note         trained with the course's Viterbi, which starts each word at cost {tok.start_cost:g}")
    if tok.history:
        first, last = tok.history[0], tok.history[-1]
        lines.append(f"training     {len(tok.history) - 1} rounds, {first.vocab_size} -> {last.vocab_size} pieces, "
                     f"loss {first.loss:.6g} -> {last.loss:.6g}")
    user = set(tok.user_defined)
    ranked = sorted((i for i in tok.matched_ids() if i not in user), key=lambda i: -tok.pieces[i][1])
    lines.append("likeliest pieces")
    lines += [f"  {i:>7}  {quote(tok.pieces[i][0])}  {tok.pieces[i][1]:.4f}" for i in ranked[:10]]
    lines.append("special tokens")
    lines += [f"  {i:>7}  {s}" + (f"  ({tok.roles.role_of(s)})" if tok.roles.role_of(s) else "")
              + ("  (unknown characters)" if i == tok.unk_id and tok.roles.role_of(s) != "unk" else "")
              for s, i in tok.special_ids.items()]
    if user:
        lines.append("user-defined pieces (matched in text, SentencePiece's bonus cost)")
        lines += [f"  {i:>7}  {quote(tok.pieces[i][0])}" for i in sorted(user)]
    if args.history_csv:
        if not tok.history:
            raise TrainingError(f"{args.model} records no training history to write")
        rounds = tok.history
        written = write_rounds_csv(args.history_csv, rounds, 0)  # the corpus length is not in the model
        lines.append(f"wrote {len(rounds):,} rounds to {written}")
    lines.append(f"fingerprint  {fingerprint(tok)}")
    _emit("\n".join(lines))
    return 0


def _inspect_other(args, tok) -> int:
    """A kind without merges (a fixed vocabulary): its tokens, specials and roles."""
    if args.history_csv:
        raise TrainingError(f"{args.model} is a {tok.kind} model; it has no training history to write")
    show = 20
    lines = [f"model        {args.model}", f"kind         {tok.kind}",
             f"vocabulary   {tok.vocab_size} tokens, {len(tok.special_tokens)} special",
             "tokens       " + " ".join(f"{i}:{quote(tok.token_text(i))}" for i in range(min(show, tok.vocab_size)))
             + (" …" if tok.vocab_size > show else "")]
    if tok.special_tokens:
        lines.append("special tokens")
        lines += [f"  {i:>7}  {s}" + (f"  ({tok.roles.role_of(s)})" if tok.roles.role_of(s) else "")
                  for s, i in tok.special_ids.items()]
    lines.append(f"fingerprint  {fingerprint(tok)}")
    _emit("\n".join(lines))
    return 0


def _merge_lines(tok, ranks) -> list[str]:
    def show(internal: int) -> str:
        return quote(tok.rank_text(internal))  # as the app's tables write it: \xe6, not \\xe6

    out = []
    for r in ranks:
        a, b = tok.merges[r]
        z = tok.base_size + r
        count = f"  x{tok.history[r].count:,}" if r < len(tok.history) else ""
        out.append(f"  {r:>5}  {show(a)} + {show(b)} -> id {tok.to_outside([z])[0]} {show(z)}{count}")
    return out


class _Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, what: str = "merges"):
        self.start = self.last = time.perf_counter()
        self.what = what

    def update(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        total = max(total, 1)
        width = 30
        filled = int(width * done / total)
        rate = done / max(now - self.start, 1e-9)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {self.what} {rate:,.1f}/s")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")


COMMANDS = {"app": cmd_app, "train": cmd_train, "count": cmd_count, "encode": cmd_encode, "decode": cmd_decode,
            "inspect": cmd_inspect, "export": cmd_export, "serve": cmd_serve,
            **{name: module.run for name, module in COMMAND_MODULES.items()}}
