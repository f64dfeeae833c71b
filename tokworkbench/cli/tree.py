"""`tokworkbench tree MODEL TOKEN`: the merges that build a token, drawn as a tree (a Unigram
piece: its score and the best segmentation of its own text). TOKEN is an id (#123 or 123), hex
bytes (x:e6 97) or the token's exact text (␣ for a space)."""

import argparse
import shutil

from tokworkbench.cli.options import MODEL_FLAGS, count, emit, load, model_options
from tokworkbench.core.inspection.mergetree import describe_tree, find_token, merge_tree, step_counts
from tokworkbench.core.models.protocol import MergeRanked

FLAGS = MODEL_FLAGS


def add_parser(sub) -> argparse.ArgumentParser:
    tree = sub.add_parser("tree", help="the tree of merges that builds a token (Unigram: its segmentation)")
    tree.add_argument("model", metavar="MODEL", help="a model file or a preset name")
    tree.add_argument("token", metavar="TOKEN", help="an id (#123 or 123), hex bytes (x:e6 97) or the exact text")
    tree.add_argument("--width", type=count, default=None, metavar="N",
                      help="columns to fit (default: the terminal's, at most 120)")
    model_options(tree)
    return tree


def run(args) -> int:
    tok = load(args, args.model)
    tid = find_token(tok, args.token)
    counts = step_counts(tok.history) if isinstance(tok, MergeRanked) else None  # the trainer's counts, if kept
    width = args.width or min(120, shutil.get_terminal_size((80, 24)).columns)
    emit("\n".join(describe_tree(merge_tree(tok, tid, counts), max(40, width))))
    return 0
