"""`tokworkbench decode -m MODEL ID...`: the text the ids spell, as it is."""

import argparse

from tokworkbench.cli.options import MODEL_FLAGS, emit_raw, load, model_options
from tokworkbench.core.inspection.roundtrip import parse_ids
from tokworkbench.core.models.roles import decode as decode_ids

FLAGS = MODEL_FLAGS | {"errors"}


def add_parser(sub) -> argparse.ArgumentParser:
    dec = sub.add_parser("decode", help="decode ids with a model")
    dec.add_argument("-m", "--model", required=True)
    dec.add_argument("ids", nargs="+", metavar="ID")
    dec.add_argument("--errors", choices=("strict", "replace"), default="strict")
    dec.add_argument("--skip-special", action="store_true", help="leave out BOS, EOS and PAD (UNK stays)")
    model_options(dec)
    return dec


def run(args) -> int:
    tok = load(args, args.model)
    ids = parse_ids(" ".join(args.ids))
    emit_raw(decode_ids(tok, ids, skip_special=args.skip_special, errors=args.errors))  # the text asked for, as it is
    return 0
