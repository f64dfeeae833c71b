"""Train byte-level BPE with tokworkbench, Hugging Face `tokenizers` and `rustbpe` on one corpus,
each the way its users run it, side by side: wall time and peak memory of each whole process.

    python benchmarks/train_compare.py CORPUS [CORPUS...] [--vocab-size 32768] [--split gpt4]
        [--rounds 3] [--check-merges] [--phases] [--whole-docs]

- tokworkbench: the command line, `tokworkbench train CORPUS --vocab-size N -o model.json`.
- Hugging Face: `Tokenizer.train([files], BpeTrainer(...))` as its documentation shows (it reads
  the files line by line), then `tokenizer.save(...)`.
- rustbpe: `train_from_iterator` fed the file's lines (a text file object), then its ranks saved.

Each run is a fresh process, timed from start to exit: imports, reading, training and writing the
model, which is what a user waits for. Rounds alternate the trainers (ours, HF, rustbpe, ours, ...)
so a machine that slows down slows all of them; the table shows medians. Each round first waits
for the 1-minute load average to fall to `--max-load` (0.5); a round that started above it is
printed but gives no ratio. Peak memory is the
process's peak RSS (`ru_maxrss` from wait4) or, while it has forked workers of its own (ours
pre-tokenizes in two), the largest total PSS of its process tree sampled every 100 ms, whichever
is higher. All use the same pattern (HF gets the Oniguruma-safe form) and both cores.

`--check-merges` compares the merges: our `hf` tie-break must give HF's, our `lexmin` rustbpe's.
Reading line by line cuts chunks at line ends, which changes a few chunks (not the work), so for
this check ours is given the same lines, each as a document, through the core API (two more runs). `--phases` runs ours once more, in one process through the core API, and
prints where its time goes and the peak RSS after each phase. `--whole-docs` adds HF fed each file as one document through
`train_from_iterator` (how this benchmark used to call it; HF then builds one giant sequence).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from quiet import wait_for_quiet

ROOT = Path(__file__).resolve().parents[1]


# -- the children -------------------------------------------------------------------------------
# Each child imports only what its own trainer needs, so its start-up is its own.

def hf_untrained(vocab: int, pattern: str):
    """An untrained HF byte-level BPE splitting with `pattern` (Oniguruma-safe), and its trainer."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=0, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    return tok, trainer


def hf_byte_level(vocab: int, split: str):
    """The same for one of our pre-tokenizers (benchmarks/train_vs_hf.py uses it)."""
    sys.path.insert(0, str(ROOT))
    from tokworkbench.core import pre_tokenizer
    from tokworkbench.core.formats.hf_common import hf_pattern

    return hf_untrained(vocab, hf_pattern(pre_tokenizer(split).pattern))


def child_hf(paths, vocab, pattern, out, whole_docs):
    tok, trainer = hf_untrained(vocab, pattern)
    if whole_docs:
        tok.train_from_iterator((Path(p).read_text(encoding="utf-8") for p in paths), trainer=trainer)
    else:
        tok.train(list(paths), trainer=trainer)
    tok.save(out)


def child_rustbpe(paths, vocab, pattern, out):
    import rustbpe

    def lines():
        for p in paths:
            with open(p, encoding="utf-8") as f:
                yield from f

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(lines(), vocab, pattern=pattern)
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])
    with open(out, "w") as f:
        json.dump([bytes(b).hex() for b, r in ranks if r >= 256], f)


def child_ours_lines(paths, vocab, split, tie, out):
    """Ours on exactly what HF's `train(files)` and our rustbpe child see: each line a document."""
    sys.path.insert(0, str(ROOT))
    from tokworkbench.core import TrainConfig
    from tokworkbench.core.bpe.trainer import train
    from tokworkbench.core.text.pretokenize import parse_split

    def lines():
        for p in paths:
            with open(p, encoding="utf-8") as f:
                yield from f

    trainer = train(lines(), TrainConfig(pre_tokenizer=parse_split(split), tie_break=tie), vocab_size=vocab)
    with open(out, "w") as f:
        json.dump([trainer.token_bytes(trainer.base_size + r).hex() for r in range(len(trainer.merges))], f)


def child_phases(paths, vocab, split, tie, out):
    """Ours through the core API, each phase timed as `tokworkbench train` runs it, with the
    process's peak RSS so far after each (forked counting workers not included)."""
    t0 = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    from tokworkbench.core import TrainConfig
    from tokworkbench.core.bpe.trainer import Trainer
    from tokworkbench.core.gcpause import collector_paused
    from tokworkbench.core.registry import modelfile
    from tokworkbench.core.text.blocks import count_files
    from tokworkbench.core.text.pretokenize import parse_split

    def hwm() -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) >> 10

    config = TrainConfig(pre_tokenizer=parse_split(split), tie_break=tie)
    phases = {"imports": time.perf_counter() - t0}
    peaks = {"imports": hwm()}
    with collector_paused():
        t = time.perf_counter()
        counted = count_files(paths, config.normalizer, config.pre_tokenizer)  # read a block at a time
        phases["read+pre-tokenize+count"] = time.perf_counter() - t
        peaks["read+pre-tokenize+count"] = hwm()
        t = time.perf_counter()
        trainer = Trainer([], config, counted=counted)
        del counted
        phases["build"] = time.perf_counter() - t
        peaks["build"] = hwm()
        t = time.perf_counter()
        for _ in trainer.run(vocab_size=vocab):
            pass
        phases["merges"] = time.perf_counter() - t
        peaks["merges"] = hwm()
        t = time.perf_counter()
        tok, summary = trainer.model(), trainer.corpus_summary()
        del trainer  # as the CLI does before writing
        modelfile.save(tok, out, summary)
        phases["write"] = time.perf_counter() - t
        peaks["write"] = hwm()
    print(json.dumps({"phases": phases, "peaks": peaks}))


# -- measuring a child --------------------------------------------------------------------------

def children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def tree_pss(pid: int) -> int:
    """Bytes used by a process and its descendants, shared pages split fairly (Linux PSS)."""
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


def measure(cmd: list[str], env: dict | None = None) -> dict:
    """Run `cmd`; its wall time, peak memory and last stdout line. Tree PSS is sampled only while
    the child has children: reading smaps takes the memory map's lock, and done all the time it
    slowed a 9 GB Hugging Face run from 66 s to 183 s."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(0.1):
            if children(proc.pid):
                peak[0] = max(peak[0], tree_pss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    sampler.join()
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {proc.returncode}"
        return {"error": last}
    lines = stdout.strip().splitlines()
    return {"seconds": seconds, "peak": max(peak[0], usage.ru_maxrss * 1024), "stdout": lines[-1] if lines else ""}


# -- merges as byte strings, to compare -------------------------------------------------------

def our_merges(model: str) -> list[str]:
    doc = json.loads(Path(model).read_text(encoding="utf-8"))
    vocab = [bytes([i]) for i in range(256)]
    for a, b in doc["merges"]:
        vocab.append(vocab[a] + vocab[b])
    return [t.hex() for t in vocab[256:]]


def hf_merges(path: str) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tokworkbench.core.bytelevel import bytes_to_unicode

    back = {c: b for b, c in bytes_to_unicode().items()}
    merges = json.loads(Path(path).read_text(encoding="utf-8"))["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    return [bytes(back[ch] for ch in a + b).hex() for a, b in pairs]


# -- the parent ---------------------------------------------------------------------------------

class Runner:
    def __init__(self, args, tmp: str):
        sys.path.insert(0, str(ROOT))
        from tokworkbench.core import pre_tokenizer
        from tokworkbench.core.formats.hf_common import hf_pattern

        self.args, self.tmp = args, tmp
        self.pattern = pre_tokenizer(args.split).pattern
        self.hf_pattern = hf_pattern(self.pattern)
        self.env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def out(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def ours(self, tie: str) -> dict:
        a = self.args
        model = self.out(f"ours-{tie}.json")
        r = measure([sys.executable, "-m", "tokworkbench", "train", *a.corpus, "--units", "byte", "--split", a.split,
                     "--vocab-size", str(a.vocab_size), "--tie-break", tie, "-o", model], self.env)
        if "error" not in r and a.check_merges:
            r["merges"] = our_merges(model)
        return r

    def hf(self, whole_docs: bool = False) -> dict:
        a = self.args
        path = self.out("hf.json")
        r = measure([sys.executable, __file__, *a.corpus, "--vocab-size", str(a.vocab_size), "--child",
                     "hf-docs" if whole_docs else "hf", "--pattern", self.hf_pattern, "--out", path])
        if "error" not in r and a.check_merges:
            r["merges"] = hf_merges(path)
        return r

    def rustbpe(self) -> dict:
        a = self.args
        path = self.out("rustbpe.json")
        r = measure([sys.executable, __file__, *a.corpus, "--vocab-size", str(a.vocab_size), "--child", "rustbpe",
                     "--pattern", self.pattern, "--out", path])
        if "error" not in r and a.check_merges:
            r["merges"] = json.loads(Path(path).read_text())
        return r

    def ours_lines(self, tie: str) -> dict:
        a = self.args
        path = self.out(f"ours-lines-{tie}.json")
        r = measure([sys.executable, __file__, *a.corpus, "--vocab-size", str(a.vocab_size), "--split", a.split,
                     "--tie-break", tie, "--child", "ours-lines", "--out", path])
        if "error" not in r:
            r["merges"] = json.loads(Path(path).read_text())
        return r

    def phases(self) -> dict:
        a = self.args
        r = measure([sys.executable, __file__, *a.corpus, "--vocab-size", str(a.vocab_size), "--split", a.split,
                     "--tie-break", a.tie_break, "--child", "phases", "--out", self.out("phases.json")])
        if "error" in r:
            return r
        got = json.loads(r["stdout"])
        return {"seconds": r["seconds"], "peak": r["peak"], "phases": got["phases"], "peaks": got["peaks"]}


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def median_of(runs: list[dict]) -> dict:
    ok = [r for r in runs if "error" not in r and r.get("quiet", True)]
    if not ok:
        return next((r for r in runs if "error" in r), {"error": "no round started at a quiet load"})
    return {"seconds": statistics.median(r["seconds"] for r in ok), "peak": statistics.median(r["peak"] for r in ok),
            "all": [r["seconds"] for r in ok], "merges": ok[-1].get("merges")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="+")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--split", default="gpt4")
    ap.add_argument("--tie-break", default="hf")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--check-merges", action="store_true")
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--whole-docs", action="store_true")
    ap.add_argument("--only", help="comma-separated subset of ours,hf,rustbpe")
    ap.add_argument("--max-load", type=float, default=0.5, help="a round waits for this 1-minute load average")
    ap.add_argument("--patience", type=float, default=1800, help="seconds a round waits for it, at most")
    ap.add_argument("--child", choices=("hf", "hf-docs", "rustbpe", "phases", "ours-lines"))
    ap.add_argument("--pattern")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.child in ("hf", "hf-docs"):
        return child_hf(args.corpus, args.vocab_size, args.pattern, args.out, args.child == "hf-docs")
    if args.child == "rustbpe":
        return child_rustbpe(args.corpus, args.vocab_size, args.pattern, args.out)
    if args.child == "ours-lines":
        return child_ours_lines(args.corpus, args.vocab_size, args.split, args.tie_break, args.out)
    if args.child == "phases":
        return child_phases(args.corpus, args.vocab_size, args.split, args.tie_break, args.out)

    import tokenizers

    size = sum(os.path.getsize(p) for p in args.corpus) / 1e6
    print(f"corpus {', '.join(Path(p).name for p in args.corpus)} ({size:.1f} MB) · byte units · split {args.split} · "
          f"vocab {args.vocab_size} · {os.cpu_count()} cores · median of {args.rounds} interleaved rounds · "
          f"load average at start {load()}", flush=True)
    only = set((args.only or "ours,hf,rustbpe").split(","))
    with tempfile.TemporaryDirectory() as tmp:
        run = Runner(args, tmp)
        trainers = {f"tokworkbench ({args.tie_break})": lambda: run.ours(args.tie_break),
                    f"HF {tokenizers.__version__} train(files)": run.hf, "rustbpe (lines)": run.rustbpe}
        trainers = {k: v for k, v, key in zip(trainers, trainers.values(), ("ours", "hf", "rustbpe")) if key in only}
        if args.whole_docs:
            trainers["HF whole docs (extra)"] = lambda: run.hf(whole_docs=True)
        runs: dict[str, list[dict]] = {name: [] for name in trainers}
        for n in range(args.rounds):
            before = wait_for_quiet(args.max_load, args.patience)
            quiet = before <= args.max_load
            for name, go in trainers.items():
                r = go()
                r["quiet"] = quiet
                runs[name].append(r)
            row = " · ".join(f"{name} {r['seconds']:.2f}s {r['peak'] / 2**20:.0f} MB" if "error" not in r else
                             f"{name} failed" for name, r in ((k, v[-1]) for k, v in runs.items()))
            print(f"round {n + 1}: load before {before:.2f}, after {load()}"
                  + ("" if quiet else f" (above {args.max_load}: no ratio from this round)") + f": {row}", flush=True)
        results = {name: median_of(rs) for name, rs in runs.items()}
        ours = next(iter(results.values()))
        counted = sum(r["quiet"] for r in next(iter(runs.values())))
        if not counted:
            print(f"no ratios: every round started above load {args.max_load} (wait for a quiet machine and retry)")
            return
        print(f"medians of the {counted} round(s) that started at load <= {args.max_load}:")
        print(f"{'trainer':28} {'time':>9} {'peak mem':>10} {'ours/them time':>15} {'ours/them mem':>14}   runs")
        for name, r in results.items():
            if "error" in r:
                print(f"{name:28} failed: {r['error']}")
                continue
            ratio_t = ours["seconds"] / r["seconds"] if "error" not in ours else float("nan")
            ratio_m = ours["peak"] / r["peak"] if "error" not in ours else float("nan")
            print(f"{name:28} {r['seconds']:8.2f}s {r['peak'] / 2**20:8.0f} MB {ratio_t:14.2f}x {ratio_m:13.2f}x   "
                  + " ".join(f"{s:.2f}" for s in r["all"]))
        print(f"load average at end {load()}", flush=True)
        if args.check_merges:
            names = list(results)
            checks = [(n, "hf") for n in names if n.startswith("HF") and "extra" not in n]
            checks += [(n, "lexmin") for n in names if n.startswith("rustbpe")]
            for name, rule in checks:
                theirs = results[name]
                if "error" in theirs:
                    continue
                mine = run.ours_lines(rule)
                if "error" in mine:
                    print(f"ours on the lines with tie-break {rule} failed: {mine['error']}")
                    continue
                a, b = mine["merges"], theirs["merges"]
                same = sum(1 for x, y in zip(a, b) if x == y)
                first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
                print(f"merges of ours on the same lines, tie-break {rule}, equal to {name}'s: {same}/{len(b)}"
                      f" (ours made {len(a)})"
                      + (f"; first difference at merge {first}" if first is not None else ""))
        if args.phases:
            r = run.phases()
            if "error" in r:
                print(f"phases failed: {r['error']}")
            else:
                p = r["phases"]
                startup = r["seconds"] - sum(p.values())
                parts = [f"start-up {startup:.2f}"] + [f"{k} {v:.2f}" for k, v in p.items()]
                print(f"ours by phase (one run, {r['seconds']:.2f} s, peak {r['peak'] / 2**20:.0f} MB): "
                      + " · ".join(parts) + " s")
                print("  peak RSS of the main process after each phase: "
                      + " · ".join(f"{k} {v} MB" for k, v in r["peaks"].items()) + f" (load {load()})")


if __name__ == "__main__":
    main()
