"""`tokworkbench compare A B [-f FILE]`: do two tokenizers mean the same tokens by the same ids?

Exit 0 when the fingerprints agree, 1 when they do not (so a pipeline can gate on it), and 2
when it cannot tell (a file that does not load), as `cmp` and `diff` do: an error must not read
as an answer.
"""

import argparse
from pathlib import Path

from tokworkbench.cli.options import MODEL_FLAGS, emit, load, model_options
from tokworkbench.core.compat import compare
from tokworkbench.core.text.corpus import read_document

ERROR_STATUS = 2  # the CLI's status for an error here; 1 is the answer "incompatible"

FLAGS = MODEL_FLAGS  # the flags the error hints may name (options.HINTS)


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="compare two tokenizers' ids and fingerprints; exit 1 when incompatible, 2 on an error")
    p.add_argument("a", metavar="A", help="a model file or a preset name")
    p.add_argument("b", metavar="B", help="a model file or a preset name")
    p.add_argument("-f", "--file", metavar="FILE", help="also count the tokens each gives on this UTF-8 text")
    p.add_argument("--show", type=int, default=10, metavar="N", help="list the first N differing ids (default: 10)")
    model_options(p, specials=False)
    return p


def run(args) -> int:
    a, b = load(args, args.a), load(args, args.b)
    text = read_document(Path(args.file)).text if args.file else None
    result = compare(a, b, text, show=max(0, args.show))
    emit("\n".join(result.lines(args.a, args.b)))
    return 0 if result.compatible else 1
