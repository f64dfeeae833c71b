"""`tokworkbench lock MODEL PATH... -o LOCK.json`: pin the ids a tokenizer gives on fixed texts,
so `tokworkbench check` can tell when a change of the tokenizer changes them (lock.py)."""

import argparse

from tokworkbench.cli.options import MODEL_FLAGS, emit, expand_globs, load, model_options, note
from tokworkbench.core.files.atomic import check_output, write_atomic
from tokworkbench.core.inspection.lock import gather_texts, lock_json, make_lock
from tokworkbench.core.inspection.lockcheck import counted
from tokworkbench.core.registry.load import model_inputs
from tokworkbench.core.text.corpus import list_files

FLAGS = MODEL_FLAGS


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("lock", help="pin the ids a tokenizer gives on texts in a lock file, for `check`")
    p.add_argument("model", metavar="MODEL", help="a model file or a preset name")
    p.add_argument("paths", nargs="+", metavar="PATH", help="text files or folders: each file is one text")
    p.add_argument("-o", "--output", required=True, metavar="LOCK.json", help="the lock file to write")
    p.add_argument("--lines", action="store_true", help="each non-empty line is one text (not each file)")
    model_options(p)
    return p


def run(args) -> int:
    paths = expand_globs(args.paths)
    check_output(args.output, [*(f for f, _ in list_files(paths)), *model_inputs(args.model)])  # a folder's files too
    model = load(args, args.model)
    skipped: list[str] = []
    texts = gather_texts(paths, args.lines, skipped)
    for name in skipped:
        note(f"skipped {name}: a binary file")
    lock = make_lock(model, args.model, texts, args.lines)
    written = write_atomic(args.output, lock_json(lock))
    emit(f"locked {counted(len(lock.texts), 'text')}, {counted(lock.id_count, 'id')} of {args.model} "
         f"(fingerprint {lock.model.fingerprint[:16]}…) in {written}")
    return 0
