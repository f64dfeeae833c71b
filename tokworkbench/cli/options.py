"""What the commands share: option groups (each flag, its default and its check written once),
the flags the settings map to, loading a model, writing to standard output, the error line.

Command modules import this module, never the package `__init__` (which imports them).
"""

import argparse
import dataclasses
import glob
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from tokworkbench.core.bpe.tiebreak import TIE_BREAKS
from tokworkbench.core.errors import (
    CorpusError,
    InvalidUtf8DecodeError,
    InvalidUtf8Error,
    ModelFileError,
    NeedsPatternError,
    OutputError,
    SettingError,
    SpecialTokenInTextError,
    TokenLimitError,
    TokWorkbenchError,
    TrainingError,
)
from tokworkbench.core.files.limits import MAX_ID, MAX_TOKEN_BYTES, short, within
from tokworkbench.core.inspection.escape import json_printable, printable
from tokworkbench.core.models.roles import ROLES, Roles
from tokworkbench.core.registry.kinds import KINDS, TRAINABLE, Kind, kind_named
from tokworkbench.core.session.settings import CUSTOM, Settings
from tokworkbench.core.text.corpus import decode_document, describe_size, read_capped, read_document
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.text.pretokenize import parse_split
from tokworkbench.core.text.sprules import RULES
from tokworkbench.core.unigram.config import ALGORITHMS, EM_SEED_SIZE

PROG = "tokworkbench"
SPLIT_CHOICES = "{none,gpt2,gpt4,o200k,metaspace,regex:PATTERN}"
DEFAULTS = {f.name: f.default for f in dataclasses.fields(Settings)}  # each setting's default, once

# The flag each setting is given by: how the command line (and serve's command for each
# session) names a setting, and the one table to turn a core message naming a setting into one
# naming the flag.
SETTING_FLAGS = {
    "units": "--units", "normalizer": "--normalize", "split": "--split", "tie_break": "--tie-break",
    "target": "--target", "special_tokens": "--special", "kind": "--kind", "algorithm": "--algorithm",
    "seed_size": "--seed-size", "prune_fraction": "--prune-fraction", "shrinking_factor": "--shrinking-factor",
    "sub_iterations": "--sub-iterations", "num_threads": "--num-threads", "max_piece_length": "--max-piece-length",
    "character_coverage": "--character-coverage", "byte_fallback": "--byte-fallback",
    "sp_normalization": "--sp-normalization", "split_digits": "--split-digits",
    "user_defined_symbols": "--user-defined-symbols", "control_symbols": "--control-symbols",
    "required_chars": "--required-chars",
}
SETTING_DESTS = {"normalizer": "normalize", "special_tokens": "special"}  # where argparse keeps a setting's flag


def dest_of(setting: str) -> str:
    return SETTING_DESTS.get(setting, setting)


# -- option groups --------------------------------------------------------------------------------
def training_options(parser: argparse.ArgumentParser) -> None:
    """What `train` and the workbench share: the corpus and how it is cut and merged."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the sample texts)")
    parser.add_argument("--units", choices=("byte", "char"), default=str(DEFAULTS["units"]))
    parser.add_argument("--split", default=DEFAULTS["split"], metavar=SPLIT_CHOICES,
                        help="pre-tokenizer preset, or a custom regex written regex:PATTERN (default: gpt4)")
    parser.add_argument("--normalize", choices=NORMALIZERS, default=DEFAULTS["normalizer"])
    parser.add_argument("--tie-break", choices=TIE_BREAKS, default=DEFAULTS["tie_break"])
    parser.add_argument("--special", nargs="+", default=[], metavar="TOKEN", help="special tokens, e.g. '<|endoftext|>'")
    parser.add_argument("--kind", "--model", choices=TRAINABLE, default=DEFAULTS["kind"], dest="kind",
                        help=f"the kind of model to train: {' or '.join(TRAINABLE)} (default: {DEFAULTS['kind']}); "
                        "--model is the old name of --kind")
    uni = parser.add_argument_group("Unigram", "with --kind unigram (units are characters; <unk> is id 0)")
    uni.add_argument("--algorithm", choices=ALGORITHMS, default=DEFAULTS["algorithm"],
                     help="course: the HF course's pruning, step by step; em: SentencePiece-style EM "
                     f"(default: {DEFAULTS['algorithm']})")
    uni.add_argument("--seed-size", type=int, default=None, metavar="N",
                     help=f"seed pieces, characters included (default: {DEFAULTS['seed_size']} for course, or about "
                     f"twice the corpus's distinct characters where it has more; {EM_SEED_SIZE} for em, "
                     "SentencePiece's default)")
    uni.add_argument("--prune-fraction", type=float, default=DEFAULTS["prune_fraction"], metavar="F",
                     help=f"course: share of the vocabulary one round removes (default: {DEFAULTS['prune_fraction']})")
    uni.add_argument("--shrinking-factor", type=float, default=DEFAULTS["shrinking_factor"], metavar="F",
                     help=f"em: share of the vocabulary one round keeps (default: {DEFAULTS['shrinking_factor']})")
    uni.add_argument("--sub-iterations", type=int, default=DEFAULTS["sub_iterations"], metavar="N",
                     help=f"em: EM iterations a round (default: {DEFAULTS['sub_iterations']})")
    uni.add_argument("--num-threads", type=int, default=DEFAULTS["num_threads"], metavar="N",
                     help="em: spm_train's num_threads; its E-step sums counts thread by thread, so the model "
                          f"depends on it (default: {DEFAULTS['num_threads']}, spm_train's)")
    uni.add_argument("--max-piece-length", type=int, default=DEFAULTS["max_piece_length"], metavar="N",
                     help=f"longest seed piece; spbpe: longest merged piece (default: {DEFAULTS['max_piece_length']})")
    sp = parser.add_argument_group("SentencePiece BPE", "with --kind spbpe: spm_train --model_type=bpe, its "
                                   "defaults; each line is a sentence (--normalize and --split do not apply)")
    sp.add_argument("--character-coverage", type=float, default=DEFAULTS["character_coverage"], metavar="F",
                    help="share of the characters kept; rarer ones become <unk> (or bytes with --byte-fallback); "
                    "also unigram --algorithm em's (course keeps every character) "
                    f"(default: {DEFAULTS['character_coverage']})")
    sp.add_argument("--byte-fallback", action="store_true", default=DEFAULTS["byte_fallback"],
                    help="add the 256 byte pieces <0x00>..<0xFF>: a character with no piece becomes its UTF-8 bytes "
                    "(as Llama 2 and Mistral were trained); also unigram --algorithm em's")
    sp.add_argument("--sp-normalization", choices=RULES, default=DEFAULTS["sp_normalization"],
                    help=f"SentencePiece's normalization rule (default: {DEFAULTS['sp_normalization']})")
    spm = parser.add_argument_group("spm_train's piece options", "with --kind spbpe, or --kind unigram --algorithm em")
    spm.add_argument("--split-digits", action="store_true", default=DEFAULTS["split_digits"],
                     help="no piece holds a digit with anything else: numbers are read digit by digit")
    spm.add_argument("--user-defined-symbols", type=symbol_list, default=DEFAULTS["user_defined_symbols"],
                     metavar="A,B,...", help="pieces always kept and matched whole before anything else, "
                     "ids right after the meta pieces")
    spm.add_argument("--control-symbols", type=symbol_list, default=DEFAULTS["control_symbols"], metavar="A,B,...",
                     help="control pieces (ids after <unk> <s> </s>): text never becomes them; they decode to nothing")
    spm.add_argument("--required-chars", default=DEFAULTS["required_chars"], metavar="CHARS",
                     help="characters kept whatever --character-coverage says")


def symbol_list(value: str) -> tuple[str, ...]:
    """spm_train's comma-separated list; an empty item is left to the config to refuse."""
    return tuple(value.split(",")) if value else ()


def count(value: str) -> int:
    """An argparse type for a number of things to show: a negative one is a typo, refused in one line."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; give 0 or more")
    return n


def model_options(parser: argparse.ArgumentParser, specials: bool = True) -> None:
    """What every command that reads a model accepts (`specials`: --special NAME=ID too)."""
    parser.add_argument("--split", metavar=SPLIT_CHOICES,
                        help="pattern for a bare .tiktoken file (one without its OUT.json companion)")
    parser.add_argument("--max-token-bytes", type=int, default=MAX_TOKEN_BYTES, metavar="N",
                        help=f"refuse a model with a token longer than N bytes (default: {MAX_TOKEN_BYTES})")
    bert = parser.add_argument_group("BERT vocab.txt (the file does not record how its text was normalized)")
    bert.add_argument("--cased", action="store_false", dest="lowercase",
                      help="a cased vocabulary: do not lowercase (BERT's do_lower_case=False)")
    accents = bert.add_mutually_exclusive_group()
    accents.add_argument("--strip-accents", action="store_true", dest="strip_accents", default=None,
                         help="strip accents (default: as lowercasing does)")
    accents.add_argument("--keep-accents", action="store_false", dest="strip_accents",
                         help="keep accents even when lowercasing")
    if specials:
        parser.add_argument("--special", action="append", default=[], metavar="NAME=ID", dest="special_ids",
                            help="a special token of .tiktoken ranks or a preset, with its id "
                            "(e.g. '<|endoftext|>=100257'); may be repeated")
    else:
        parser.set_defaults(special_ids=[])


MODEL_FLAGS = frozenset({"split", "max_token_bytes"})  # the flags model_options adds that the error hints name


def role_options(parser: argparse.ArgumentParser) -> None:
    """--bos/--eos/--pad/--unk TOKEN (`train`, `vocab`, the workbench)."""
    what = {"bos": "opens each document", "eos": "closes each document",
            "pad": "fills short rows of a padded batch", "unk": "stands for text the vocabulary cannot spell"}
    for role in ROLES:
        parser.add_argument(f"--{role}", metavar="TOKEN", help=f"the special token that {what[role]}")


def roles_from(args) -> Roles:
    return Roles.of({r: getattr(args, r) for r in ROLES})


# -- settings from the command line -------------------------------------------------------------
def seed_size(args) -> int:
    """--seed-size, or the algorithm's default: SentencePiece's for em, Settings' for course."""
    if args.seed_size is not None:
        return args.seed_size
    return EM_SEED_SIZE if args.algorithm == "em" else DEFAULTS["seed_size"]


def settings_from(args, target: int | None = None, fit: tuple[str, ...] = (), default_split: str | None = None,
                  roles: Roles | None = None, specials: tuple[str, ...] | None = None) -> Settings:
    """The Settings that `training_options` and the role flags give, validated (its config).
    An unset --split is `default_split`, or the kind's own; a role's token becomes a special
    token where the kind takes the user's (so `--bos '<s>'` alone makes '<s>' one)."""
    kind = kind_named(args.kind)
    pre = parse_split(args.split or default_split or kind.default_split)
    split, pattern = (CUSTOM, pre.pattern) if pre.name == CUSTOM else (pre.name, None)
    roles = roles_from(args) if roles is None else roles
    if not roles.tokens and kind.default_roles:
        roles = Roles.of(dict(kind.default_roles))  # SentencePiece's own, as its model file gives them
    if specials is None:
        specials = special_tokens(args.special + [t for t in roles.tokens if t not in args.special]) \
            if kind.takes_special_tokens else tuple(args.special)
    settings = Settings(units=args.units, normalizer=args.normalize or DEFAULTS["normalizer"], split=split,
                        pattern=pattern, tie_break=args.tie_break, special_tokens=specials, roles=roles,
                        kind=kind.name, algorithm=args.algorithm, seed_size=seed_size(args),
                        prune_fraction=args.prune_fraction, shrinking_factor=args.shrinking_factor,
                        sub_iterations=args.sub_iterations, num_threads=args.num_threads,
                        max_piece_length=args.max_piece_length,
                        character_coverage=args.character_coverage, byte_fallback=args.byte_fallback,
                        sp_normalization=args.sp_normalization, split_digits=args.split_digits,
                        user_defined_symbols=args.user_defined_symbols, control_symbols=args.control_symbols,
                        required_chars=args.required_chars,
                        target=DEFAULTS["target"] if target is None else target, fit=fit)
    settings.config()
    return settings


def check_own_tokens(kind: Kind, specials: list[str], roles: Roles) -> None:
    """A kind with its own special tokens (Unigram's <unk>) takes no others, and its own token
    only the unk role: said in the command line's words, before any work."""
    if kind.takes_special_tokens:
        return
    if len(kind.own_tokens) > 1:
        _check_own_set(kind, specials, roles)
        return
    own = kind.own_tokens[0]
    others = " or ".join(k.noun for k in KINDS.values() if k.takes_special_tokens)
    if specials:
        raise TrainingError(f"a {kind.noun}'s one special token is {own} (id 0); --special is for "
                            f"{' or '.join(k.title for k in KINDS.values() if k.trainable and k.takes_special_tokens)}")
    other = [(r, t) for r, t in roles.items() if not (r == "unk" and t in kind.own_tokens)]
    if other:
        role, token = other[0]
        raise TrainingError(f"--{role} {token}: a {kind.noun}'s one special token is {own} (id 0), which can "
                            f"take only the unk role (--unk '{own}'); bos, eos and pad need a {others}")


def _check_own_set(kind: Kind, specials: list[str], roles: Roles) -> None:
    """The same for a kind with several tokens of its own (SentencePiece's <unk>, <s>, </s>):
    a role may name any of them, the first (the unknown piece) only as unk."""
    own = kind.own_tokens
    named = f"special tokens are {', '.join(own)} (ids 0 to {len(own) - 1})"
    if specials:
        raise TrainingError(f"a {kind.noun}'s {named}; --special is for "
                            f"{' or '.join(k.title for k in KINDS.values() if k.trainable and k.takes_special_tokens)}")
    for role, token in roles.items():
        if token not in own or (role == "unk") != (token == own[0]):
            raise TrainingError(f"--{role} {token}: a {kind.noun}'s {named}; {own[0]} takes the unk role and only it")


def special_tokens(specials: list[str]) -> tuple[str, ...]:
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


def special_ids(items: list[str]) -> dict[str, int]:
    """--special NAME=ID, each split at its last '=' (a name may hold '=')."""
    out: dict[str, int] = {}
    for item in items:
        name, sep, tid = item.rpartition("=")
        if not sep or not name or not (tid.isascii() and tid.isdigit()):
            raise ModelFileError(f"--special {item!r} is not NAME=ID (e.g. '<|endoftext|>=100257')")
        if not within(tid, MAX_ID):
            raise ModelFileError(f"--special {short(name)}: the id is a whole number from 0 to {MAX_ID:,} "
                                 "(HF and tiktoken hold ids as u32)")
        if name in out:
            raise ModelFileError(f"--special gives {name!r} twice")
        out[name] = int(tid)
    return out


def load(args, name: str):
    """A model file, or a preset by name (cl100k_base, o200k_base, gpt2) when no such file is here,
    read with `model_options`' flags. (Every format's reader is imported here, where a model is
    read, not by every command: 25 ms of a training's start.)"""
    from tokworkbench.core.registry.load import open_model

    return open_model(name, args.split, args.max_token_bytes, special_ids(args.special_ids), args.lowercase,
                      args.strip_accents)


MAX_STDIN_BYTES = 1 << 30  # -f - reads standard input up to this


def text_options(parser: argparse.ArgumentParser) -> None:
    """The text a command works on: an argument, or -f FILE (- for standard input)."""
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("text", nargs="?")
    src.add_argument("-f", "--file", help="a UTF-8 text file, or - for standard input")


def input_text(args) -> str:
    if args.file == "-":
        return decode_document("<stdin>", read_stdin()).text
    if args.file is not None:
        return read_document(Path(args.file)).text
    return args.text


def read_stdin(limit: int = MAX_STDIN_BYTES) -> bytes:
    if sys.stdin is None:
        raise CorpusError("cannot read standard input: it is closed")
    try:
        data = read_capped(sys.stdin.buffer, limit)
    except OSError as exc:
        raise CorpusError(f"cannot read standard input: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CorpusError(f"standard input holds more than {describe_size(limit)}; pass a file with -f FILE instead")
    return data


def expand_globs(paths: list[str]) -> list[str]:
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


# -- the error line -----------------------------------------------------------------------------
def _utf8_hint(exc, args) -> str:
    return str(exc) if args.replace_invalid else \
        f"{exc}, or load it with U+FFFD in place of bad bytes (--replace-invalid)"


# (the error, the flag that helps: a dest a command declares in its FLAGS, the message with it)
HINTS = (
    (InvalidUtf8Error, "replace_invalid", _utf8_hint),
    (NeedsPatternError, "split", lambda exc, args: f"{exc} with --split"),
    (TokenLimitError, "max_token_bytes", lambda exc, args: f"{exc} with --max-token-bytes N"),
    (InvalidUtf8DecodeError, "errors", lambda exc, args: exc.worded("--errors replace")),
    (SpecialTokenInTextError, "ordinary", lambda exc, args: f"{str(exc).split(';')[0]}; --allow-special encodes "
                                                          "it as its special id, --ordinary as ordinary text"),
)


def advice(exc: TokWorkbenchError, args, flags: frozenset[str]) -> str:
    """The core's message, plus the flag that helps where this command has one (`flags`); a
    setting the core names in words (seed size) is named by its flag (--seed-size)."""
    if isinstance(exc, SettingError):
        return exc.worded("--" + exc.setting.replace("_", "-"))
    for error, flag, worded in HINTS:
        if isinstance(exc, error) and flag in flags:
            return worded(exc, args)
    return str(exc)


def note(text: str) -> None:
    print(f"{PROG}: {text}", file=sys.stderr)


# -- standard output ----------------------------------------------------------------------------
def stdout():
    """Standard output, or an error if the shell started us with it closed (`>&-`)."""
    if sys.stdout is None:
        raise OutputError("cannot write to standard output: it is closed")
    return sys.stdout


def emit_raw(text: str) -> None:
    with writing_stdout():
        stdout().write(text + "\n")


def emit(text: str) -> None:
    """A report: a string from a model file (a pattern, a token, a name) must not drive the
    terminal, so every control character but the line end is escaped (escape.printable)."""
    emit_raw(printable(text))


def emit_json(text: str) -> None:
    """JSON: the same rule in JSON's own escapes, so it stays the same JSON."""
    emit_raw(json_printable(text))


def flush_stdout() -> None:
    """Flush inside the error handling: a full disk must fail here, not silently at exit."""
    if sys.stdout is not None:
        with writing_stdout():
            sys.stdout.flush()


@contextmanager
def writing_stdout():
    """A failed write to stdout (/dev/full, a bad descriptor) as an OutputError; a broken pipe
    passes through, since the reader leaving is not an error worth a message."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        silence_stdout()
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's own flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


class Progress:
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
