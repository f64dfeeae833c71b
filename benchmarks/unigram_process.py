"""Unigram training as a user waits for it: whole processes, from the command to the saved model.

    python benchmarks/unigram_process.py [CORPUS] [--sizes 2,10] [--vocab-size 8000] [--repeat 3]

`unigram_share.py` compares the models inside one process; this times what a
user runs, interpreter start and imports included:
- ours: `tokworkbench train FILE --kind unigram --algorithm em --split metaspace --vocab-size N -o M`
  (its defaults: normalizer none, character coverage 0.9995, 16 virtual threads);
- SentencePiece: `SentencePieceTrainer.train(input=FILE, model_type="unigram",
  normalization_rule_name="identity", vocab_size=N)` in a fresh `python -c`, its other settings
  its defaults (16 threads). The two models are the same, id for id and score for score: the
  script checks it after each size;
- HF: `Tokenizer(Unigram()).train([FILE], UnigramTrainer(...))`, Metaspace pre-tokenizer, in a fresh
  `python -c`: train(files), as HF's docs run it.
The file is the corpus's first N MB, cut at a line. Each round waits for a quiet machine (1-minute
load <= --max-load; a round that starts above it gets no ratio). Runs are interleaved so load
changes hit every trainer alike; medians of each run's own ratio to SentencePiece are printed.
Wall time, CPU time (the process and the workers it waited for) and peak RSS come from `wait4`.
Bytecode is compiled before the clock starts, as it is on an installed copy.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quiet import wait_for_quiet  # the same rule for a quiet round

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "bench-data" / "corpus" / "en-10M.txt"

SENTENCEPIECE = """
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[2], vocab_size=int(sys.argv[3]),
    model_type="unigram", normalization_rule_name="identity", minloglevel=2)
"""

HF = """
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
tok = Tokenizer(models.Unigram())
tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
trainer = trainers.UnigramTrainer(vocab_size=int(sys.argv[3]), special_tokens=["<unk>"], unk_token="<unk>",
                                  show_progress=False)
tok.train([sys.argv[1]], trainer=trainer)
tok.save(sys.argv[2] + ".json")
"""


def training_file(corpus: Path, mb: float, folder: Path) -> Path:
    data = corpus.read_bytes()[: int(mb * 1e6)]
    lines = data[: data.rfind(b"\n") + 1].decode("utf-8").splitlines()
    path = folder / f"train-{mb:g}MB.txt"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def same_models(ours: Path, theirs: Path) -> bool:
    """Whether our model file holds spm_train's pieces, scores and order."""
    import numpy as np
    import sentencepiece as spm

    sys.path.insert(0, str(ROOT))
    from tokworkbench.core.registry.load import load_any

    model = load_any(ours)
    sp = spm.SentencePieceProcessor(model_file=str(theirs))
    want = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    return [(p, float(np.float32(s))) for p, s in model.pieces] == want


def timed(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one process, which must succeed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"{argv[:4]}... failed: {proc.stderr.read().decode(errors='replace')[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--sizes", default="2,10", help="training sizes in MB (default: 2,10)")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-hf", action="store_true")
    ap.add_argument("--max-load", type=float, default=0.5, help="a round starts once the 1-minute load is this low")
    ap.add_argument("--patience", type=float, default=1800, help="seconds a round waits for it, at most")
    args = ap.parse_args()
    if not args.corpus.is_file():
        sys.exit(f"no corpus at {args.corpus}: run `make corpus` or name a file")
    python = sys.executable
    subprocess.run([python, "-m", "compileall", "-q", str(ROOT / "tokworkbench")], check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mb in [float(s) for s in args.sizes.split(",")]:
            src = training_file(args.corpus, mb, folder)
            n = str(args.vocab_size)
            commands = {
                "sentencepiece": [python, "-c", SENTENCEPIECE, str(src), str(folder / "sp"), n],
                "tokworkbench em": [python, "-m", "tokworkbench", "train", str(src), "--model", "unigram",
                                    "--algorithm", "em", "--split", "metaspace", "--vocab-size", n,
                                    "-o", str(folder / "ours.json")],
            }
            if not args.skip_hf:
                commands["hf UnigramTrainer"] = [python, "-c", HF, str(src), str(folder / "hf"), n]
            print(f"\n{src.stat().st_size / 1e6:.1f} MB ({args.corpus.name}), vocab {args.vocab_size}: whole processes")
            print(f"  {'run':<4} {'trainer':<20} {'wall s':>7} {'x sp':>6} {'cpu s':>7} {'x sp':>6} "
                  f"{'peak MB':>8} {'x sp':>6}  load")
            runs = []
            for k in range(args.repeat):
                before = wait_for_quiet(args.max_load, args.patience)
                if before > args.max_load:
                    print(f"  round {k + 1} starts at load {before:.2f}, above {args.max_load}: no ratio from it")
                rows = {}
                for name, argv in commands.items():
                    load = os.getloadavg()
                    rows[name] = timed(argv)
                    wall, cpu, peak = rows[name]
                    sp = rows["sentencepiece"]
                    print(f"  {k + 1:<4} {name:<20} {wall:7.2f} {wall / sp[0]:6.2f} {cpu:7.2f} {cpu / sp[1]:6.2f} "
                          f"{peak:8.0f} {peak / sp[2]:6.2f}  {load[0]:.2f} {load[1]:.2f}", flush=True)
                if before <= args.max_load:
                    runs.append(rows)
            print(f"  the two models the same, every id and score: "
                  f"{same_models(folder / 'ours.json', folder / 'sp.model')}")
            if not runs:
                print(f"  no ratios: every round started above load {args.max_load}")
                continue
            print(f"  medians over {len(runs)} quiet runs (of each run's own ratio to sentencepiece):")
            for name in commands:
                wall = statistics.median(r[name][0] for r in runs)
                ratio = statistics.median(r[name][0] / r["sentencepiece"][0] for r in runs)
                cpu = statistics.median(r[name][1] / r["sentencepiece"][1] for r in runs)
                peak = statistics.median(r[name][2] / r["sentencepiece"][2] for r in runs)
                print(f"  {name:<20} wall {wall:6.2f} s  x sp {ratio:5.2f}   cpu x sp {cpu:5.2f}   peak x sp {peak:5.2f}")


if __name__ == "__main__":
    main()
