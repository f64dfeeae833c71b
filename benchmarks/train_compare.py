"""Train byte-level BPE with tokworkbench, Hugging Face `tokenizers` and `rustbpe` on one corpus,
side by side in one run: wall time and peak memory of each, and the ratios.

    python benchmarks/train_compare.py CORPUS [CORPUS...] [--vocab-size 32768] [--split gpt4]

Each trainer runs in its own child process, which reads the corpus into Python and trains. Peak
memory is that process's own: its peak RSS, or, if higher, the largest total of it and the
workers it forks (Linux PSS, sampled every 100 ms, so shared pages count once).
All use the same pattern (Hugging Face gets the Oniguruma-safe form) and both cores. Also checks: our `hf` tie-break reproduces HF's merges, and
our `lexmin` reproduces rustbpe's (when asked with --check-merges; it trains twice more).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def read_docs(paths):
    from tokworkbench.core.text.corpus import iter_documents

    return [d.text for d in iter_documents(paths)]


def run_ours(paths, vocab, split, tie):
    from tokworkbench.core import TrainConfig, pre_tokenizer
    from tokworkbench.core.bpe.trainer import train

    docs = read_docs(paths)
    t = time.perf_counter()
    trainer = train(docs, TrainConfig(pre_tokenizer=pre_tokenizer(split), tie_break=tie), vocab_size=vocab)
    seconds = time.perf_counter() - t
    merges = [trainer.token_bytes(trainer.base_size + r).hex() for r in range(len(trainer.merges))]
    return seconds, merges


def hf_byte_level(vocab: int, split: str):
    """An untrained HF byte-level BPE with our pattern (in its Oniguruma-safe form) and its trainer."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    from tokworkbench.core import pre_tokenizer
    from tokworkbench.core.formats.hf import hf_pattern

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(hf_pattern(pre_tokenizer(split).pattern)), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=0, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    return tok, trainer


def run_hf(paths, vocab, split):
    from tokworkbench.core.bytelevel import bytes_to_unicode

    docs = read_docs(paths)
    t = time.perf_counter()
    tok, trainer = hf_byte_level(vocab, split)
    tok.train_from_iterator(docs, trainer=trainer)
    seconds = time.perf_counter() - t
    back = {c: b for b, c in bytes_to_unicode().items()}
    merges = [bytes(back[ch] for ch in a + b).hex()
              for a, b in json.loads(tok.to_str())["model"]["merges"]]
    return seconds, merges


def run_rustbpe(paths, vocab, split):
    import rustbpe

    from tokworkbench.core import pre_tokenizer

    docs = read_docs(paths)
    t = time.perf_counter()
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(docs), vocab, pattern=pre_tokenizer(split).pattern)
    seconds = time.perf_counter() - t
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])
    merges = [bytes(b).hex() for b, r in ranks if r >= 256]
    return seconds, merges


def children(pid: int) -> list[int]:
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            out += [int(c) for c in f.read().split()]
    return out


def tree_pss(pid: int) -> int:
    """Bytes of memory used by a process and all its descendants, shared pages split fairly
    (Linux PSS): what a forked worker adds is its own pages, not the parent's it can see."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) * 1024
            todo += children(p)
        except (OSError, StopIteration):
            pass  # gone meanwhile
    return total


class PeakMemory:
    """This process's peak RSS, or, while it has worker processes (ours, pre-tokenizing), the
    largest `tree_pss` seen every 100 ms if that is higher. Reading smaps walks the page tables
    under the memory map's lock, so it is only done while workers exist: done all the time, it
    slowed a 9 GB Hugging Face run from 66 s to 183 s."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        me = os.getpid()
        while not self._stop.wait(0.1):
            try:
                if children(me):
                    self.peak = max(self.peak, tree_pss(me))
            except OSError:
                pass

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return max(self.peak, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def child(args):
    paths = args.corpus
    memory = PeakMemory()
    if args.child == "ours":
        seconds, merges = run_ours(paths, args.vocab_size, args.split, args.tie_break)
    elif args.child == "hf":
        seconds, merges = run_hf(paths, args.vocab_size, args.split)
    else:
        seconds, merges = run_rustbpe(paths, args.vocab_size, args.split)
    peak = memory.stop()
    print(json.dumps({"seconds": seconds, "peak": peak, "merges": merges if args.check_merges else []}))


def spawn(name, args, extra=()):
    cmd = [sys.executable, __file__, *args.corpus, "--vocab-size", str(args.vocab_size), "--split", args.split,
           "--child", name, *extra]
    if args.check_merges:
        cmd.append("--check-merges")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="+")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--split", default="gpt4")
    ap.add_argument("--tie-break", default="hf")
    ap.add_argument("--check-merges", action="store_true")
    ap.add_argument("--child", choices=("ours", "hf", "rustbpe"))
    args = ap.parse_args()
    if args.child:
        return child(args)
    size = sum(os.path.getsize(p) for p in args.corpus) / 1e6
    print(f"corpus {', '.join(Path(p).name for p in args.corpus)} ({size:.1f} MB) · byte units · split {args.split} · "
          f"vocab {args.vocab_size} · {os.cpu_count()} cores")
    results = {"tokworkbench": spawn("ours", args, ("--tie-break", args.tie_break)),
               "HF tokenizers": spawn("hf", args), "rustbpe": spawn("rustbpe", args)}
    ours = results["tokworkbench"]
    print(f"{'trainer':16} {'time':>9} {'peak mem':>10} {'ours/them time':>15} {'ours/them mem':>14}")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:16} failed: {r['error']}")
            continue
        ratio_t = ours["seconds"] / r["seconds"]
        ratio_m = ours["peak"] / r["peak"]
        print(f"{name:16} {r['seconds']:8.2f}s {r['peak'] / 2**20:8.0f} MB {ratio_t:14.2f}x {ratio_m:13.2f}x")
    if args.check_merges:
        # HF's tie rule is our `hf`; rustbpe's is `lexmin` over raw byte ids
        rules = {"HF tokenizers": "hf", "rustbpe": "lexmin"}
        for name, r in results.items():
            if name == "tokworkbench" or "merges" not in r:
                continue
            mine = ours if rules[name] == args.tie_break else spawn("ours", args, ("--tie-break", rules[name]))
            same = sum(1 for x, y in zip(mine["merges"], r["merges"]) if x == y)
            first = next((i for i, (x, y) in enumerate(zip(mine["merges"], r["merges"])) if x != y), None)
            print(f"merges with tie-break {rules[name]} equal to {name}'s: {same}/{len(r['merges'])}"
                  + (f" (first difference at merge {first})" if first is not None else ""))


if __name__ == "__main__":
    main()
