"""`tokworkbench check LOCK.json MODEL [--texts DIR]`: does MODEL still give the locked ids?

Exit 0 and one line when every text gives the same ids (and the fingerprint is the same), 1 with
the first change in one block, and 2 when it cannot tell (a damaged lock, a text that is gone or
changed, a model that does not load): an error must not read as an answer.
"""

import argparse

from tokworkbench.cli.options import MODEL_FLAGS, emit, load, model_options
from tokworkbench.core.inspection.lock import read_lock
from tokworkbench.core.inspection.lockcheck import check_lock

ERROR_STATUS = 2  # 1 is the answer "changed"

FLAGS = MODEL_FLAGS


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("check", help="check a tokenizer against a lock file; exit 1 when its ids changed, 2 on an error")
    p.add_argument("lock", metavar="LOCK.json", help="a lock file written by `tokworkbench lock`")
    p.add_argument("model", metavar="MODEL", help="a model file or a preset name")
    p.add_argument("--texts", metavar="DIR", help="find the locked texts under DIR (default: as named, from here)")
    model_options(p)
    return p


def run(args) -> int:
    lock = read_lock(args.lock)
    result = check_lock(lock, load(args, args.model), args.texts, args.model)
    emit("\n".join(result.lines()))
    return 0 if result.identical else 1
