"""`tokworkbench batches -m M PATH... --context T (--starts | --stride | --batch --seed | --pad-documents)`.

Each file is one document (each line, with --lines), encoded with its boundaries. JSON goes
to standard output or -o; NPZ needs -o; `text` is a readable listing of the same batch.
"""

import argparse
import json
import unicodedata

from tokworkbench.cli.options import MODEL_FLAGS, emit, emit_json, load, model_options
from tokworkbench.core.batching import IGNORE, BatchSpec, document_ids, make_batch, save_json, save_npz, to_json
from tokworkbench.core.batching.batch import MAX_CELLS, MAX_TEXT_CELLS
from tokworkbench.core.errors import BatchError
from tokworkbench.core.files.atomic import check_output, write_atomic
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.registry.load import model_inputs
from tokworkbench.core.text.corpus import Skipped, iter_documents, list_files

FLAGS = MODEL_FLAGS  # the flags the error hints may name (options.HINTS)


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "batches", help="cut input/target batches from documents (windows, or padded rows with a mask)",
        description="Encode each document with its BOS/EOS boundaries, in order, into one stream, and cut a "
        "batch: windows of T inputs with the T targets shifted by one (--starts, --stride, or B random "
        "starts with --batch and --seed), or one row per document padded with PAD (--pad-documents), "
        "with an attention mask and -100 where a target is ignored.")
    p.add_argument("-m", "--model", required=True, help="a model file or a preset name")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders; each file is one document")
    p.add_argument("--lines", action="store_true", help="each non-empty line is a document instead")
    p.add_argument("--context", "-T", type=int, required=True, metavar="T", help="ids per row")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--starts", metavar="LIST", help="window starts in the stream, e.g. 0,5")
    how.add_argument("--stride", type=int, metavar="K", help="windows at 0, K, 2K, … while a whole window fits")
    how.add_argument("--pad-documents", action="store_true", help="one row per document, padded with PAD")
    p.add_argument("--batch", "-B", type=int, metavar="B",
                   help="B random windows (alone), or at most B rows (with --stride or --pad-documents)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the random starts (default: 0)")
    p.add_argument("--format", choices=("json", "npz", "text"), default="json")
    p.add_argument("--stream", action="store_true",
                   help="--format text: list the whole document stream too, every id of every document")
    p.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of standard output")
    model_options(p, specials=False)
    return p


def spec_from(args) -> BatchSpec:
    if args.starts is not None:
        return BatchSpec(args.context, "starts", _starts(args.starts), batch=args.batch)
    if args.stride is not None:
        return BatchSpec(args.context, "stride", stride=args.stride, batch=args.batch)
    if args.pad_documents:
        return BatchSpec(args.context, "pad", batch=args.batch)
    if args.batch is not None:
        return BatchSpec(args.context, "random", batch=args.batch, seed=args.seed)
    raise BatchError("choose the rows: --starts LIST, --stride K, --batch B [--seed S], or --pad-documents")


def _starts(text: str) -> tuple[int, ...]:
    parts = [s.strip() for s in text.replace(" ", ",").split(",") if s.strip()]
    if not parts or not all(p.isascii() and p.isdigit() for p in parts):
        raise BatchError(f"--starts {text!r} is not a list of whole numbers from 0, e.g. 0,5")
    return tuple(int(p) for p in parts)


def documents(args) -> list[str]:
    docs = [d.text for d in iter_documents(args.paths, "strict", [], report=Skipped())]
    if args.lines:
        docs = [line for d in docs for line in d.splitlines() if line.strip()]
    return docs


def run(args) -> int:
    spec = spec_from(args)  # a bad T, B or start is one line before any reading
    if args.format == "npz" and not args.output:
        raise BatchError("--format npz writes a binary file: give -o OUT.npz")
    if args.output:
        check_output(args.output, [str(f) for f, _ in list_files(args.paths)] + model_inputs(args.model))
    model = load(args, args.model)
    texts = documents(args)
    batch = make_batch(model, texts, spec, MAX_CELLS if args.format == "npz" else MAX_TEXT_CELLS)
    if args.format == "npz":
        save_npz(batch, args.output)
    elif args.format == "json" and args.output:
        save_json(batch, args.output)
    else:
        if args.format == "text":
            text = "\n".join(describe(model, texts, batch, args.stream))
        else:
            text = json.dumps(to_json(batch), ensure_ascii=False)
        if not args.output:
            (emit if args.format == "text" else emit_json)(text)
            return 0
        write_atomic(args.output, (text + "\n").encode("utf-8"))
    b, t = batch.shape
    extra = f", {batch.valid_targets} valid targets" if batch.attention_mask is not None else ""
    emit(f"wrote {args.output}: {b}×{t} {spec.mode} batch{extra}, fingerprint {batch.fingerprint[:16]}")
    return 0


def describe(model, texts: list[str], batch, stream: bool = False) -> list[str]:
    """Each row of the batch: position, input, target, mask; with `stream`, first every document
    of the stream with its ids (the whole corpus: hundreds of KB for the sample texts)."""
    def cell(i: int) -> str:
        return "-100" if i == IGNORE else f"{i} {visible(model.token_text(i))}"

    starts = batch.document_starts.tolist()
    out = [f"fingerprint {batch.fingerprint}",
           f"stream: {batch.stream_length} ids in {len(starts)} documents" + ("" if stream else " (--stream lists them)")]
    if stream:
        for k, (d, at) in enumerate(zip(document_ids(model, texts), starts)):
            out.append(f"  doc {k} @{at}: " + " ".join(f"{i}:{visible(model.token_text(i))}" for i in d))
    b, t = batch.shape
    out.append(f"{batch.spec.mode} batch {b}×{t}" + (f", {batch.valid_targets} valid targets, uniform loss ln V = "
                                                       f"{batch.uniform_loss:.6f}" if batch.attention_mask is not None
                                                       and batch.uniform_loss is not None else ""))
    for r in range(b):
        out.append(f"row {r} (start {int(batch.starts[r])})")
        width = max(_width(cell(int(i))) for i in [*batch.inputs[r], *batch.targets[r]]) + 2
        out.append(f"  {'t':>3}  {_pad('input', width)}{_pad('target', width)}" +
                   ("mask" if batch.attention_mask is not None else ""))
        for c in range(t):
            mask = f"{int(batch.attention_mask[r, c])}" if batch.attention_mask is not None else ""
            out.append(f"  {c:>3}  {_pad(cell(int(batch.inputs[r, c])), width)}"
                       f"{_pad(cell(int(batch.targets[r, c])), width)}{mask}".rstrip())
    return out


def _width(text: str) -> int:
    """Terminal columns: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))
