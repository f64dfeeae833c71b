"""`tokworkbench count PATH... -o COUNTS`: pre-tokenize and count chunks into a count file, here
or on a Dask cluster (`train --from-counts` and the workbench read it)."""

import argparse
import time

from tokworkbench.cli.options import DEFAULTS, SPLIT_CHOICES, emit, expand_globs, note, stdout
from tokworkbench.core.errors import ClusterError, CorpusError
from tokworkbench.core.files.atomic import check_output
from tokworkbench.core.files.countfile import write_counts
from tokworkbench.core.gcpause import collector_running
from tokworkbench.core.text.blocks import count_files
from tokworkbench.core.text.corpus import Skipped, list_files, require_text
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.text.pretokenize import parse_split
from tokworkbench.core.text.samples import sample_paths
from tokworkbench.engines.remote import is_url

FLAGS = frozenset({"replace_invalid", "split"})


def add_parser(sub) -> argparse.ArgumentParser:
    cnt = sub.add_parser("count", help="pre-tokenize and count chunks into a count file, here or on a Dask cluster")
    cnt.add_argument("paths", nargs="*", metavar="PATH",
                     help="files, folders or glob patterns (default: the sample texts); each file is one document")
    cnt.add_argument("--split", default=DEFAULTS["split"], metavar=SPLIT_CHOICES,
                     help=f"pre-tokenizer (default: {DEFAULTS['split']})")
    cnt.add_argument("--normalize", choices=NORMALIZERS, default=DEFAULTS["normalizer"])
    cnt.add_argument("--replace-invalid", action="store_true", help="replace bytes that are not UTF-8 with U+FFFD")
    cnt.add_argument("--engine", choices=("local", "dask"), default="local",
                     help="local: this machine's cores; dask: the cluster at --scheduler (pip install 'tokworkbench[dask]')")
    cnt.add_argument("--scheduler", metavar="ADDRESS", help="the Dask scheduler, e.g. tcp://10.0.0.5:8786")
    cnt.add_argument("--task-mb", type=int, default=64, metavar="N",
                     help="megabytes of text per Dask task (default: 64; preset patterns only)")
    cnt.add_argument("-o", "--output", required=True, metavar="COUNTS")
    return cnt


def run(args) -> int:
    """Pre-tokenize and count into a count file, here or on a Dask cluster."""
    pre = parse_split(args.split)
    if args.engine == "dask" and not args.scheduler:
        raise ClusterError("--engine dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
    if args.scheduler and args.engine != "dask":
        raise ClusterError("--scheduler is for --engine dask")
    if args.task_mb < 1:
        raise CorpusError(f"--task-mb {args.task_mb} makes no sense; give at least 1")
    paths = args.paths or sample_paths()
    urls = [p for p in paths if is_url(p)]
    if urls and args.engine != "dask":
        raise CorpusError(f"{urls[0]}: shards named by URL are read by the cluster: add --engine dask --scheduler ADDRESS")
    report = Skipped()
    files = _files(paths, report if args.engine == "dask" else Skipped())  # the local reader reports its own walk
    check_output(args.output, [f for f, _ in files if not is_url(str(f))])  # before the count, not after it
    stdout()
    errors = "replace" if args.replace_invalid else "strict"
    started = time.perf_counter()
    if args.engine == "dask":
        try:
            from tokworkbench.engines import dask_count
        except ImportError as exc:
            raise ClusterError(f"--engine dask needs Dask: pip install 'tokworkbench[dask]' ({exc})") from None
        shards = dask_count.shards_of(files, report)
        with collector_running():
            counted = dask_count.count_dask(shards, args.normalize, pre, args.scheduler, errors,
                                            task_bytes=args.task_mb << 20)
    else:
        # a block at a time on every core, as train counts: no whole-file str
        counted = count_files(expand_globs(paths), args.normalize, pre, errors, [], report)
    for line in report.lines():
        note(line)
    require_text(counted.chars)
    write_counts(args.output, counted, args.normalize, pre)
    emit(f"counted {int(counted.counts.sum()):,} chunks, {len(counted.chunks):,} distinct, in "
         f"{counted.documents:,} document{'' if counted.documents == 1 else 's'} ({counted.chars:,} chars) in "
         f"{time.perf_counter() - started:.2f}s; wrote {args.output}")
    return 0


def _files(paths: list[str], report: Skipped) -> list:
    """Local files (globs expanded) and URLs (listed through fsspec), in the order named."""
    from tokworkbench.engines.remote import list_urls

    out: list = []
    for p in paths:
        out += list_urls([p]) if is_url(p) else list_files(expand_globs([p]), report)
    return out
