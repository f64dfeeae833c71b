"""SentencePiece BPE encoding against sentencepiece itself, side by side, round by round.

    python benchmarks/encode_spbpe.py MODEL [--text FILE] [--bytes 2000000] [--rounds 5] [--wait 120]

MODEL is a SentencePiece BPE `.model` (e.g. mistral-common's tokenizer.model.v1). The first
--bytes of --text (default bench-data/corpus/en-10M.txt) are encoded by both in four ways:
"calls", one call a line in a Python loop for each library (`[sp.encode(l) for l in lines]`
against `[m.encode_ordinary(l) for l in lines]`: what a caller with one line at a time gets);
"lines", ours one call a line against sentencepiece given the list (`sp.encode(lines,
num_threads=1)`: its loop in C++, ours in Python); "batch", the list in one call to each
(`m.encode_batch(lines)`); and "whole", the text as one string. Each round starts from a freshly read model (empty caches: every distinct
word is new, as on first use), checks the ids are equal, and prints CPU seconds and wall
seconds of each, and `os.getloadavg()` before and after. On a 2-core machine shared with other
jobs a ratio means little: a round whose 1-minute load before it was above --max-load prints
no ratio. Before each round it waits up to --wait seconds for the load to drop, and says so
when it did not.
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sentencepiece as spm
from quiet import wait_for_quiet

from tokworkbench.core.formats.sentencepiece import from_sentencepiece


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def load_text(load: tuple[float, ...]) -> str:
    return "/".join(f"{x:.2f}" for x in load)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--text", default=str(ROOT / "bench-data" / "corpus" / "en-10M.txt"))
    ap.add_argument("--bytes", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--wait", type=float, default=120.0, help="seconds to wait for the load to drop before a round")
    ap.add_argument("--max-load", type=float, default=0.5)
    args = ap.parse_args()
    raw = Path(args.model).read_bytes()
    with open(args.text, "rb") as f:
        text = f.read(args.bytes).decode("utf-8", "ignore")
    lines = text.splitlines()
    sp = spm.SentencePieceProcessor(model_file=args.model)
    print(f"{args.model}: {len(text):,} characters, {len(lines):,} lines; CPU s / wall s; load 1/5/15 min")
    _, cpu, _ = timed(lambda: from_sentencepiece(raw)._fast.pair_table)
    print(f"reading the model and building its pair table (once per model, not in the rounds): {cpu:.3f} s CPU")
    warm = from_sentencepiece(raw)
    _, cpu, _ = timed(lambda: (warm.encode_batch(lines[:2000]), [warm.encode_ordinary(line) for line in lines[:2000]]))
    print(f"loading the compiled kernels (once per process, as sentencepiece's library is loaded): {cpu:.3f} s CPU")
    for r in range(1, args.rounds + 1):
        before = wait_for_quiet(args.max_load, args.wait)
        if before > args.max_load:
            print(f"round {r}: load still {before:.2f} after waiting {args.wait:.0f} s")
        load0 = os.getloadavg()
        rows = []
        for mode in ("calls", "lines", "batch", "whole"):
            model = from_sentencepiece(raw)  # fresh caches
            _ = model._fast.pair_table  # built once per model, as sentencepiece builds its tables at load
            if mode == "calls":
                ref, sp_cpu, sp_wall = timed(lambda: [sp.encode(line) for line in lines])
                got, cpu, wall = timed(lambda: [model.encode_ordinary(line) for line in lines])  # noqa: B023
            elif mode == "lines":
                ref, sp_cpu, sp_wall = timed(lambda: sp.encode(lines, num_threads=1))
                got, cpu, wall = timed(lambda: [model.encode_ordinary(line) for line in lines])  # noqa: B023
            elif mode == "batch":  # the list in one call, as sentencepiece is given it
                ref, sp_cpu, sp_wall = timed(lambda: sp.encode(lines, num_threads=1))
                got, cpu, wall = timed(lambda: model.encode_batch(lines))  # noqa: B023
            else:
                ref, sp_cpu, sp_wall = timed(lambda: sp.encode(text))
                got, cpu, wall = timed(lambda: model.encode_ordinary(text))  # noqa: B023
            if got != ref:
                sys.exit(f"round {r} {mode}: ids differ from sentencepiece's")
            rows.append((mode, sp_cpu, sp_wall, cpu, wall))
        load1 = os.getloadavg()
        for mode, sp_cpu, sp_wall, cpu, wall in rows:
            ratio = f"  ours/sp speed {sp_cpu / cpu:.2f}x (CPU)" if load0[0] <= args.max_load else "  (loaded: no ratio)"
            print(f"round {r} {mode:5}: sentencepiece {sp_cpu:.3f}/{sp_wall:.3f}  ours {cpu:.3f}/{wall:.3f}"
                  f"  ids equal  load before {load_text(load0)} after {load_text(load1)}{ratio}")


if __name__ == "__main__":
    main()
