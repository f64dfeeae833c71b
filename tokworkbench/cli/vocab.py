"""`tokworkbench vocab TOKENS.txt -o M.json`: a fixed vocabulary from a list of tokens.

TOKENS.txt has one token per line in id order (escapes: see core/formats/fixedfile.py); the
roles name tokens of the list, which then are special (never matched inside content).
"""

import argparse
from pathlib import Path

from tokworkbench.cli.options import emit, role_options, roles_from
from tokworkbench.core.compat import fingerprint
from tokworkbench.core.files.atomic import check_output
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.fixed.modelfile import parse_tokens
from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.registry import modelfile
from tokworkbench.core.text.corpus import read_document

FLAGS = frozenset()  # the flags the error hints may name (options.HINTS)


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("vocab", help="make a fixed-vocabulary model from TOKENS.txt (one token per line, in id order)",
                       description="Make a fixed-vocabulary model: TOKENS.txt holds one token per line in id order "
                       "(write a newline as \\n, a tab as \\t, a carriage return as \\r, a space as \\s, a "
                       "backslash as \\\\). Text is segmented longest match first; a character no token "
                       "matches becomes the --unk token.")
    p.add_argument("tokens", metavar="TOKENS.txt")
    role_options(p)
    p.add_argument("--special", nargs="+", default=[], metavar="TOKEN",
                   help="other tokens of the list that are special (no role)")
    p.add_argument("-o", "--output", required=True, metavar="MODEL.json")
    return p


def run(args) -> int:
    check_output(args.output, [args.tokens])
    roles = roles_from(args)
    tokens = parse_tokens(read_document(Path(args.tokens)).text, args.tokens)
    model = FixedVocab(tuple(tokens), roles, tuple(s for s in args.special if roles.role_of(s) is None))
    modelfile.save(model, args.output)
    specials = ", ".join(f"{quote(s)} {i}" + (f" ({model.roles.role_of(s)})" if model.roles.role_of(s) else "")
                         for s, i in model.special_ids.items())
    emit(f"fixed vocabulary of {model.vocab_size} tokens; specials: {specials or 'none'}; "
         f"fingerprint {fingerprint(model)[:16]}; wrote {args.output}")
    return 0
