"""The command line: train, encode, decode, inspect — thin wrappers over the same core the app uses.

With no sub-command it starts the workbench. Every failure prints one line and exits non-zero.
"""

import argparse
import json
import sys
import time
from pathlib import Path

from .core.formats import modelfile
from .core.text.corpus import iter_documents
from .core.text.samples import sample_paths
from .core.errors import TokWorkbenchError
from .core.formats.export import FORMATS, export
from .core.formats.load import load_any
from .core.text.normalize import NORMALIZERS
from .core.text.pretokenize import pre_tokenizer
from .core.bpe.tiebreak import TIE_BREAKS
from .core.bpe.trainer import TrainConfig, train
from .core.inspection.roundtrip import parse_ids

PROG = "tokworkbench"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A workbench for byte-pair-encoding tokenizers. Without a command, opens the "
        "workbench on PATHs (or on the embedded sample texts).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    app = sub.add_parser("app", help="open the workbench (the default)")
    app.add_argument("paths", nargs="*", metavar="PATH")

    tr = sub.add_parser("train", help="train a BPE model on files or folders")
    tr.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the sample texts)")
    tr.add_argument("--units", choices=("byte", "char"), default="byte")
    tr.add_argument("--split", default="gpt4", metavar="{none,gpt2,gpt4,o200k,REGEX}",
                    help="pre-tokenizer preset or a custom regex (default: gpt4)")
    tr.add_argument("--normalize", choices=NORMALIZERS, default="none")
    size = tr.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=int, metavar="N", help="target vocabulary size, specials included")
    size.add_argument("--merges", type=int, metavar="N", help="number of merges")
    tr.add_argument("--tie-break", choices=TIE_BREAKS, default="first")
    tr.add_argument("--special", nargs="+", default=[], metavar="TOKEN", help="special tokens, e.g. '<|endoftext|>'")
    tr.add_argument("--replace-invalid", action="store_true", help="replace bytes that are not UTF-8 with U+FFFD")
    tr.add_argument("-o", "--output", required=True, metavar="MODEL.json")

    enc = sub.add_parser("encode", help="encode text with a model")
    enc.add_argument("-m", "--model", required=True)
    src = enc.add_mutually_exclusive_group(required=True)
    src.add_argument("text", nargs="?")
    src.add_argument("-f", "--file")
    enc.add_argument("--format", choices=("ids", "tokens", "json"), default="ids")
    enc.add_argument("--allow-special", action="store_true", help="encode special-token strings as special ids")

    dec = sub.add_parser("decode", help="decode ids with a model")
    dec.add_argument("-m", "--model", required=True)
    dec.add_argument("ids", nargs="+", metavar="ID")
    dec.add_argument("--errors", choices=("strict", "replace"), default="strict")

    ins = sub.add_parser("inspect", help="summarize a model: ours, HF tokenizer.json, .tiktoken or minbpe .model")
    ins.add_argument("model")
    ins.add_argument("--split", help="pattern for a bare .tiktoken file: gpt2, gpt4, o200k or a regex")

    exp = sub.add_parser("export", help="write a model as HF tokenizer.json, tiktoken ranks, or minbpe .model")
    exp.add_argument("-m", "--model", required=True)
    exp.add_argument("--format", choices=FORMATS, required=True)
    exp.add_argument("-o", "--output", required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or (argv[0] not in ("train", "encode", "decode", "inspect", "export", "app", "-h", "--help")):
        argv = ["app", *argv]
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except TokWorkbenchError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def cmd_app(args) -> int:
    from .app import run_app  # Textual is imported only when the app is wanted

    return run_app(args.paths)


def cmd_train(args) -> int:
    config = TrainConfig(
        units=args.units,
        normalizer=args.normalize,
        pre_tokenizer=pre_tokenizer(args.split),
        tie_break=args.tie_break,
        special_tokens=tuple(args.special),
    )
    paths = args.paths or sample_paths()
    errors = "replace" if args.replace_invalid else "strict"
    skipped: list[str] = []
    started = time.perf_counter()
    progress = _Progress() if sys.stderr.isatty() else None
    docs = (d.text for d in iter_documents(paths, errors, skipped))
    trainer = train(docs, config, vocab_size=args.vocab_size, merges=args.merges,
                    on_step=progress.update if progress else None)
    if progress:
        progress.close()
    for path in skipped:
        print(f"{PROG}: skipped binary file {path}", file=sys.stderr)
    wanted = trainer.merges_for_vocab(args.vocab_size) + len(trainer.merges) if args.vocab_size else args.merges
    done = len(trainer.merges)
    if done < wanted:
        print(f"{PROG}: stopped after {done} merges: no pair is left to merge", file=sys.stderr)
    modelfile.save(trainer.tokenizer(), args.output, trainer.corpus_summary())
    elapsed = time.perf_counter() - started
    print(
        f"trained {done} merges, vocabulary {trainer.vocab_size}, {trainer.initial_tokens:,} -> "
        f"{trainer.total_tokens:,} tokens ({trainer.compression:.3f} {args.units}s/token) "
        f"in {elapsed:.2f}s; wrote {args.output}"
    )
    return 0


def cmd_encode(args) -> int:
    tok = load_any(args.model)
    if args.file is not None:
        from .core.text.corpus import read_document

        text = read_document(Path(args.file)).text
    else:
        text = args.text
    ids = tok.encode(text, allowed_special="all" if args.allow_special else ())
    if args.format == "ids":
        print(" ".join(map(str, ids)))
    elif args.format == "tokens":
        print(" ".join(json.dumps(tok.token_text(i), ensure_ascii=False) for i in ids))
    else:
        print(json.dumps({"ids": ids, "tokens": [tok.token_text(i) for i in ids]}, ensure_ascii=False))
    return 0


def cmd_decode(args) -> int:
    tok = load_any(args.model)
    ids = parse_ids(" ".join(args.ids))
    sys.stdout.write(tok.decode(ids, errors=args.errors) + "\n")
    return 0


def cmd_export(args) -> int:
    tok = load_any(args.model)
    for note in export(tok, args.format, args.output):
        print(note)
    return 0


def cmd_inspect(args) -> int:
    tok = load_any(args.model, args.split)
    pre = tok.pre_tokenizer
    lines = [
        f"model        {args.model}",
        f"units        {tok.units}",
        f"normalizer   {tok.normalizer}",
        f"pre-tokenizer {pre.name}" + (f"  {pre.pattern}" if pre.name == "custom" else ""),
        f"tie-break    {tok.tie_break}",
        f"vocabulary   {tok.vocab_size} = {tok.base_size} base + {len(tok.merges)} merges + {len(tok.special_tokens)} special",
    ]
    if tok.history:
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
        lines += [f"  {i:>7}  {s}" for s, i in tok.special_ids.items()]
    print("\n".join(lines))
    return 0


def _merge_lines(tok, ranks) -> list[str]:
    def show(internal: int) -> str:
        return json.dumps(tok.rank_text(internal), ensure_ascii=False)

    out = []
    for r in ranks:
        a, b = tok.merges[r]
        z = tok.base_size + r
        count = f"  x{tok.history[r].count:,}" if r < len(tok.history) else ""
        out.append(f"  {r:>5}  {show(a)} + {show(b)} -> id {tok.to_outside([z])[0]} {show(z)}{count}")
    return out


class _Progress:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self):
        self.start = self.last = time.perf_counter()

    def update(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        total = max(total, 1)
        width = 30
        filled = int(width * done / total)
        rate = done / max(now - self.start, 1e-9)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} merges {rate:,.0f}/s")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")


COMMANDS = {"app": cmd_app, "train": cmd_train, "encode": cmd_encode, "decode": cmd_decode,
            "inspect": cmd_inspect, "export": cmd_export}
