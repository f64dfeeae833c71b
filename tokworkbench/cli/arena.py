"""`tokworkbench arena -m A -m B [PATH...]`: several tokenizers over the same texts, one row each.

Tokenizers are named with -m (repeated), texts are the PATHs: a file argument is then never
guessed to be a model or a text (a tokenizer.json is both a model and valid UTF-8). Without -m:
cl100k_base and o200k_base; without PATH: the sample texts. Each file is one text, named by its
file name (by its path where two share a name); the premium is against --reference, by default
the first text (the sample texts' English prose).

With more than one tokenizer on Linux, each is loaded and scored in its own forked process
(text/parallel.py's fork_map): loading a 200k-rank preset is most of the time, and it does not
depend on the others.
"""

import argparse
import os
from pathlib import Path

from tokworkbench.cli.options import MODEL_FLAGS, emit, emit_json, expand_globs, load, model_options, note
from tokworkbench.core.errors import ReportError
from tokworkbench.core.files.atomic import check_output, write_atomic
from tokworkbench.core.inspection.arena import ALL, BRIEF, COLUMNS, Arena, check_reference, score_tokenizer
from tokworkbench.core.inspection.reports import bar_chart_svg, render, to_json
from tokworkbench.core.text.corpus import iter_documents
from tokworkbench.core.text.parallel import can_fork, fork_map
from tokworkbench.core.text.samples import sample_paths

FLAGS = MODEL_FLAGS | {"replace_invalid"}
DEFAULT_MODELS = ("cl100k_base", "o200k_base")
FORMAT_CHOICES = ("table", "csv", "json", "markdown")


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("arena", help="compare tokenizers over texts: bytes/token, premium, vocabulary used, "
                       "unknown and byte-fallback rates, round trip")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="text files, folders or glob patterns (default: the sample texts); each file is one text")
    p.add_argument("-m", "--model", action="append", dest="models", metavar="NAME|FILE",
                   help="a tokenizer: a preset (cl100k_base, o200k_base, gpt2) or any model file; repeat for "
                   f"more (default: {' and '.join(DEFAULT_MODELS)})")
    p.add_argument("--format", choices=FORMAT_CHOICES, default="table")
    p.add_argument("--reference", metavar="FILE",
                   help="the text premiums are against: its name or path (default: the first text)")
    p.add_argument("--svg", metavar="OUT.svg", help="also write a bar chart of bytes per token per text")
    p.add_argument("--replace-invalid", action="store_true", help="replace bytes that are not UTF-8 with U+FFFD")
    model_options(p)
    return p


def named_texts(paths: list[str], errors: str) -> list[tuple[str, str]]:
    """(name, text) per file: the file name, or the path where two files share a name."""
    docs = list(iter_documents(expand_globs(paths) if paths else sample_paths(), errors))
    names = [Path(d.name).name for d in docs]
    return [(name if names.count(name) == 1 else d.name, d.text) for name, d in zip(names, docs)]


def reference_name(texts: list[tuple[str, str]], given: str | None) -> str:
    """--reference as one of the texts' names: the name itself, a path to the same file, or
    (where that is unique) a file name."""
    if given is None:
        return texts[0][0]
    names = [n for n, _ in texts]
    if given in names:
        return given
    for candidate in (Path(given).name, str(Path(given))):
        if candidate in names:
            return candidate
    check_reference(texts, given)  # raises, naming the texts
    return given


def score_all(args, texts: list[tuple[str, str]], reference: str) -> Arena:
    names = args.models or list(DEFAULT_MODELS)
    if len(set(names)) != len(names):
        raise ReportError(f"-m {next(n for n in names if names.count(n) > 1)} is given twice")

    def one(name: str):
        return score_tokenizer(name, load(args, name), texts, reference)

    parallel = len(names) > 1 and (os.cpu_count() or 1) > 1 and can_fork()
    scored = fork_map(one, names) if parallel else [one(n) for n in names]
    return Arena.of(scored, [n for n, _ in texts], reference)


def run(args) -> int:
    if args.svg:
        check_output(args.svg, args.paths)
    texts = named_texts(args.paths, "replace" if args.replace_invalid else "strict")
    reference = reference_name(texts, args.reference)
    check_reference(texts, reference)
    arena = score_all(args, texts, reference)
    if args.format == "json":
        emit_json(to_json(arena.rows(), COLUMNS, {"reference": reference, "texts": list(arena.texts),
                                                  "tokenizers": list(arena.names)}))
    elif args.format == "table":
        emit("\n".join([render("table", arena.rows(), BRIEF), "", *notes(arena)]))
    else:
        emit(render(args.format, arena.rows(), COLUMNS))
    if args.svg:
        written = write_atomic(args.svg, svg_of(arena).encode("utf-8"))
        note(f"wrote the chart to {written}")
    return 0


def notes(arena: Arena) -> list[str]:
    """What the table leaves out: the reference, each lossy round trip, each text that failed."""
    lines = [(f"premium: tokens on a text / tokens on {arena.reference} (the same tokenizer); "
              "only fair between translations of one text")]
    for s in arena.lossy():
        d = s.first_difference
        where = f"; first at character {d.offset}: {d.text!r} -> {d.decoded!r}" if d else ""
        lines.append(f"lossy: {s.tokenizer} on {s.text}: {s.differing:,} characters differ after "
                     f"decode(encode(text)){where}")
    lines += [f"error: {s.tokenizer} on {s.text}: {s.error}" for t in arena.tokenizers for s in t.scores if s.error]
    return lines


def svg_of(arena: Arena) -> str:
    values = {(s.text, t.name): s.bytes_per_token for t in arena.tokenizers for s in (*t.scores, t.total)}
    return bar_chart_svg("bytes per token (longer is fewer tokens)", [*arena.texts, ALL], list(arena.names), values)
