"""Count chunks with the Dask engine on a LocalCluster against the local parallel counter, in one
run, and check that both give the same counts; prints the wall times and their ratio, the peak
memory of each Dask worker, and the count file's size per GB of text.

    python benchmarks/count_dask.py [CORPUS...] [--workers 2] [--task-mb 64] [--split gpt4]

Default corpus: bench-data/corpus/en-100M.txt (`make corpus` builds it). The local run reads
the files and counts them with `count_chunks` (which forks one worker per core); the Dask run
starts a LocalCluster of `--workers` single-threaded worker processes first (its start-up is
printed, not timed) and counts with `count_dask`. On one machine Dask cannot beat the local
counter (same cores, plus pickling partial counts); the ratio says what the cluster path costs,
which more machines then pay back.
"""

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="*", default=[str(ROOT / "bench-data/corpus/en-100M.txt")])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--task-mb", type=int, default=64)
    ap.add_argument("--split", default="gpt4")
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    from tokworkbench.core.files.countfile import to_bytes
    from tokworkbench.core.text.chunks import count_chunks
    from tokworkbench.core.text.corpus import iter_documents, list_files
    from tokworkbench.core.text.pretokenize import parse_split
    from tokworkbench.engines.dask_count import count_dask, plan, shards_of

    pre = parse_split(args.split)
    shards = shards_of(list_files(args.corpus))
    size = sum(s.size for s in shards)
    tasks = len(plan(shards, pre, args.task_mb << 20))
    print(f"corpus: {', '.join(args.corpus)} ({size / 1e6:,.1f} MB, {len(shards)} shards, {tasks} tasks of "
          f"{args.task_mb} MB), split {args.split}")

    t = time.perf_counter()
    local = count_chunks([d.text for d in iter_documents(args.corpus)], "none", pre)
    local_s = time.perf_counter() - t
    print(f"local parallel counter: {local_s:6.2f} s  ({len(local.chunks):,} distinct chunks)")

    t = time.perf_counter()
    with LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
        print(f"LocalCluster of {args.workers} workers started in {time.perf_counter() - t:.2f} s (not timed)")
        t = time.perf_counter()
        got = count_dask(shards, "none", pre, client, task_bytes=args.task_mb << 20, show_progress=False)
        dask_s = time.perf_counter() - t
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    same = got.chunks == local.chunks and got.counts.tolist() == local.counts.tolist()
    print(f"dask, {args.workers} workers:      {dask_s:6.2f} s  (same counts and order: {same})")
    print(f"ratio dask / local: {dask_s / local_s:.2f}x")
    print("peak RSS per worker: " + ", ".join(f"{kb / 1024:,.0f} MB" for kb in sorted(peaks.values())))
    with tempfile.TemporaryDirectory():
        data = to_bytes(got, "none", pre)
    print(f"count file: {len(data) / 1e6:,.2f} MB = {len(data) / 1e6 / (size / 1e9):,.1f} MB per GB of text")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
