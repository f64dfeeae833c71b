"""`tokworkbench diff A B [PATH...]`: what changed between two versions of a tokenizer (diff.py).

Exit 0 when nothing that changes ids did, 1 when something did, and 2 when it cannot tell (a
file that does not load), as `diff` does.
"""

import argparse
import json

from tokworkbench.cli.options import MODEL_FLAGS, count, emit, emit_json, expand_globs, load, model_options
from tokworkbench.core.inspection.diff import SHOW, diff_csv, diff_json, diff_lines, diff_markdown, diff_models
from tokworkbench.core.inspection.lock import gather_texts
from tokworkbench.core.registry.kinds import kind_of

ERROR_STATUS = 2  # 1 is the answer "different"

FLAGS = MODEL_FLAGS


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("diff", help="what changed between two tokenizers: tokens, merges, specials, pipeline; "
                       "exit 1 when different, 2 on an error")
    p.add_argument("a", metavar="A", help="a model file or a preset name")
    p.add_argument("b", metavar="B", help="a model file or a preset name")
    p.add_argument("paths", nargs="*", metavar="PATH", help="texts (files or folders) to find the first one the two "
                   "encode differently")
    p.add_argument("--lines", action="store_true", help="each non-empty line of the texts is one text")
    p.add_argument("--format", choices=("text", "json", "markdown", "csv"), default="text",
                   help="csv: one row per listed change (the first --show of each kind)")
    p.add_argument("--show", type=count, default=SHOW, metavar="N", help=f"examples of each change (default: {SHOW})")
    model_options(p, specials=False)
    return p


def describe(model) -> list[str]:
    return kind_of(model).describe(model)


def run(args) -> int:
    a, b = load(args, args.a), load(args, args.b)
    texts = gather_texts(expand_globs(args.paths), args.lines) if args.paths else []
    d = diff_models(a, b, (args.a, args.b), texts, describe, max(0, args.show))
    if args.format == "json":
        emit_json(json.dumps(diff_json(d), ensure_ascii=False, indent=1))
    elif args.format == "csv":
        emit(diff_csv(d).rstrip("\n"))
    else:
        emit("\n".join(diff_markdown(d) if args.format == "markdown" else diff_lines(d)))
    return 0 if d.identical else 1
