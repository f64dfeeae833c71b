"""The 1 GB check behind docs/scale.md (issue 26): count a gigabyte, on this machine and on a
LocalCluster through `tokworkbench count --engine dask`, train from the count file, and set what
was measured beside what the 1 TB estimate assumed.

    python benchmarks/make_big_corpus.py          # bench-data/corpus/big-1G.txt, once
    python benchmarks/scale_1g.py [--corpus FILE] [--vocab-size 32768] [--skip-dask]

Every step is a whole `tokworkbench` process, as a user runs it; for each the script prints wall
time, CPU time (the process and the workers it forked and waited for, from wait4's rusage) and
peak RSS (the largest of them). The estimate's inputs are rates per core, so they are read from
CPU time, which a busy machine does not change much, rather than from wall time; the load
average before and after each step is printed too. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# What docs/scale.md's "On paper: 1 TB on 50 workers" assumed, from the 100 MB runs.
ASSUMED_MB_PER_CORE_SECOND = 1.5
ASSUMED_CHUNKS_AT_100MB = 472_772
ASSUMED_HEAPS = (0.5, 0.6)
ASSUMED_BYTES_PER_CHUNK = (6, 9)


def run(argv: list[str], label: str) -> dict:
    load = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = process.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime
    print(f"{label}: {wall:7.1f} s wall, {cpu:7.1f} s CPU, peak RSS {usage.ru_maxrss / 1024:,.0f} MiB "
          f"(load {load:.2f} before, {os.getloadavg()[0]:.2f} after)")
    if process.returncode:
        print(out)
        raise SystemExit(f"{label} failed with {process.returncode}")
    return {"wall": wall, "cpu": cpu, "rss_mib": usage.ru_maxrss / 1024, "out": out}


def dask_count(corpus: Path, counts: Path, workers: int, task_mb: int) -> dict:
    from distributed import Client, LocalCluster

    def usage() -> tuple[float, int]:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime, r.ru_maxrss

    with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
        before = client.run(usage)
        step = run([sys.executable, "-m", "tokworkbench", "count", str(corpus), "--split", "gpt4",
                    "--engine", "dask", "--scheduler", cluster.scheduler_address,
                    "--task-mb", str(task_mb), "-o", str(counts)], f"count, dask ({workers} workers)")
        after = client.run(usage)
    step["worker_cpu"] = sum(after[w][0] - before[w][0] for w in after)
    step["worker_rss_mib"] = [after[w][1] / 1024 for w in sorted(after)]
    print(f"  workers: {step['worker_cpu']:.1f} s CPU in all; peak RSS "
          + ", ".join(f"{m:,.0f} MiB" for m in step["worker_rss_mib"]))
    return step


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT / "bench-data/corpus/big-1G.txt")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--task-mb", type=int, default=64)
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()
    if not args.corpus.is_file():
        raise SystemExit(f"{args.corpus} is missing: python benchmarks/make_big_corpus.py builds it")

    import numpy as np

    size_mb = args.corpus.stat().st_size / 1e6
    print(f"corpus: {args.corpus} ({size_mb:,.0f} MB), split gpt4, {os.cpu_count()} cores")
    tw = [sys.executable, "-m", "tokworkbench"]
    with tempfile.TemporaryDirectory() as tmp:
        counts, model = Path(tmp) / "counts.npz", Path(tmp) / "model.json"
        local = run(tw + ["count", str(args.corpus), "--split", "gpt4", "-o", str(counts)], "count, local")
        with np.load(counts, allow_pickle=False) as z:
            distinct = int(z["counts"].shape[0])
        file_bytes = counts.stat().st_size
        if not args.skip_dask:
            dask_counts = Path(tmp) / "dask.npz"
            dask = dask_count(args.corpus, dask_counts, args.workers, args.task_mb)
            with np.load(counts, allow_pickle=False) as a, np.load(dask_counts, allow_pickle=False) as b:
                same = all(np.array_equal(a[k], b[k]) for k in ("chunk_bytes", "chunk_ends", "counts"))
            print(f"  same chunks, counts and order as the local count: {same}")
        trained = run(tw + ["train", "--from-counts", str(counts), "--units", "byte",
                            "--vocab-size", str(args.vocab_size), "-o", str(model)],
                      f"train --from-counts, vocab {args.vocab_size}")

    print()
    print("measured against the estimate's inputs:")
    rate = size_mb / local["cpu"]
    print(f"  counting rate: {rate:.2f} MB per CPU-second (assumed {ASSUMED_MB_PER_CORE_SECOND} MB/s per core)")
    if not args.skip_dask:
        print(f"  counting rate on the cluster: {size_mb / dask['worker_cpu']:.2f} MB per worker CPU-second; "
              f"worker peak {max(dask['worker_rss_mib']):,.0f} MiB with {args.task_mb} MB tasks "
              "(assumed about 1 GB per worker thread)")
    low, high = (ASSUMED_CHUNKS_AT_100MB * (size_mb / 100) ** e for e in ASSUMED_HEAPS)
    exponent = np.log(distinct / ASSUMED_CHUNKS_AT_100MB) / np.log(size_mb / 100)
    print(f"  distinct chunks: {distinct:,} (Heaps' law from en-100M predicted {low:,.0f}-{high:,.0f}; "
          f"measured exponent {exponent:.2f})")
    print(f"  count file: {file_bytes / 1e6:,.1f} MB = {file_bytes / distinct:.1f} bytes per distinct chunk "
          f"(assumed {ASSUMED_BYTES_PER_CHUNK[0]}-{ASSUMED_BYTES_PER_CHUNK[1]})")
    print(f"  training from it: {trained['rss_mib']:,.0f} MiB peak = {trained['rss_mib'] * 2**20 / distinct:,.0f} "
          f"bytes per distinct chunk (limit asked: 8 GiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
