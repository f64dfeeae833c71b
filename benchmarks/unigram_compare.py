"""Train Unigram `em` with tokworkbench, SentencePiece and HF's UnigramTrainer, same run, same text.

    python benchmarks/unigram_compare.py [CORPUS] [--sizes 2,10] [--vocab-size 8000] [--held-out-mb 0.3]

CORPUS defaults to ../shared/bench/corpus-10M.txt.xz (the mixed 10 MB file: English and other
languages), decompressed into bench-data/. The held-out text is the corpus's last
`--held-out-mb` megabytes, never trained on; each size trains on that many megabytes from the
start. Every trainer sees the text line by line (SentencePiece's sentences). SentencePiece's dummy
prefix puts a ▁ before every line; the metaspace pre-tokenizer (HF's with prepend_scheme="always")
puts none before a line that already starts with a space, so "   void" would be ▁ ▁ ▁ ▁void to
SentencePiece and ▁ ▁ ▁void to HF. HF therefore gets each line (training and held-out) with one
leading space, which makes the two see exactly the same words (on indented English text the
convention alone was a 3 % difference). Ours gets the lines as SentencePiece does: an `em` model
follows SentencePiece's conventions (spconventions.py), its dummy ▁ even before a leading space,
so a leading space of our own was one ▁ token more on every held-out line (5,541 on en-10M's
2 MB run: ours showed +1.44 % against SentencePiece, -3.52 % without them).

SentencePiece runs with unigram, the identity normalization and otherwise its defaults (it uses
every core, as em's worker processes do; HF's Rust as it comes). Its default
remove_extra_whitespaces trims and collapses spaces, which is how its training sees the text and
how ours trains (a lone ▁, indentation, weighs nothing: em.unseen_words); but a model that
collapsed the held-out lines would not spell them. So it trains on the lines trimmed and
collapsed, as that default would read them, with remove_extra_whitespaces=false, and its model
encodes the held-out lines as they are, every space a ▁, as ours does. (Trained on the raw lines
with remove_extra_whitespaces=false, spm_train counts every ▁ of indentation, ▁ scored -1.42
where ours has -2.93 on the mixed text, and its held-out tokens on en-10M's 2 MB were 111,663
where they are 107,883 this way.) `--sp-coverage` is its character_coverage (0.9995, its default, drops the rarest
characters into <unk>), `--coverage` ours (the same by default; with 1.0, every character kept,
as em did before it had the option, ours took 1.46 % more held-out tokens on the mixed corpus).
Each trainer runs in a child process, so its peak memory (ru_maxrss) is its own. Prints times,
the ratios to SentencePiece, peak memory and the tokens each model gives on the held-out lines.
"cpu" is the child's CPU time, its threads' and worker processes' included; "wk MB" the largest
worker process's peak (em's; pages shared with the parent count in both). "time" is the child's
whole run (imports, training, saving, encoding the held-out lines); "train" is training alone
(from the lines in memory to a model: SentencePiece's includes writing its input file, which it
reads), the time the bar is about. The load average is printed beside them.
sentencepiece is only a benchmark dependency (the `bench` extra).
"""

import argparse
import gc
import json
import lzma
import multiprocessing as mp
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_XZ = ROOT.parent / "shared" / "bench" / "corpus-10M.txt.xz"


def default_corpus() -> Path:
    out = ROOT / "bench-data" / "mixed-10M.txt"
    if not out.exists():
        out.parent.mkdir(exist_ok=True)
        with lzma.open(DEFAULT_XZ) as src:
            out.write_bytes(src.read())
    return out


def slices(path: Path, sizes_mb: list[float], held_mb: float) -> tuple[dict[float, list[str]], list[str]]:
    """Training lines for each size (from the start) and held-out lines (from the end), cut at
    line ends so no character is split."""
    text = path.read_text(encoding="utf-8")
    data = text.encode("utf-8")
    held_from = len(data) - int(held_mb * 1e6)
    held_from = data.index(b"\n", held_from) + 1
    train_part, held = data[:held_from].decode("utf-8"), data[held_from:].decode("utf-8")
    out = {}
    for mb in sizes_mb:
        cut = min(len(train_part.encode("utf-8")), int(mb * 1e6))
        chunk = train_part.encode("utf-8")[:cut].decode("utf-8", errors="ignore")
        chunk = chunk[: chunk.rfind("\n") + 1] if "\n" in chunk else chunk
        out[mb] = [line for line in chunk.split("\n") if line]
    return out, [line for line in held.split("\n") if line]


def run_child(target, *args):
    """Run target(*args) in a fresh process; its result, wall time and peak RSS (MB)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def body():
        t0 = time.perf_counter()
        result = target(*args)
        elapsed = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # CPU time of every thread and every (ended) worker process: what the run cost the machine
        cpu = sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                              resource.RUSAGE_CHILDREN)))
        workers_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest worker's
        child.send(((*result, cpu, workers_peak), elapsed, peak))

    proc = ctx.Process(target=body)
    proc.start()
    result = parent.recv()
    proc.join()
    return result


def as_sentencepiece_sees(lines: list[str]) -> list[str]:
    """Each line with the leading space that makes metaspace's ▁ prefix SentencePiece's dummy prefix."""
    return [" " + line for line in lines]


def ours(lines: list[str], held: list[str], vocab_size: int, seed_size: int, out: str, coverage: float) -> int:
    from tokworkbench.core.gcpause import collector_paused
    from tokworkbench.core.registry import modelfile
    from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

    t0 = time.perf_counter()
    with collector_paused():
        learner = UnigramLearner(lines, UnigramConfig(algorithm="em", seed_size=seed_size,
                                                        character_coverage=coverage))
        for _ in learner.run(vocab_size=vocab_size - 1):  # + <unk>
            pass
    model = learner.model()
    trained = time.perf_counter() - t0
    del learner  # its worker processes end (and count in the CPU time)
    gc.collect()
    modelfile.save(model, out)
    return sum(len(model.encode(line)) for line in held), trained


def collapsed(lines: list[str]) -> list[str]:
    """The lines as SentencePiece's remove_extra_whitespaces reads them: spaces trimmed, runs of them one."""
    return [line for line in (re.sub(" +", " ", line).strip(" ") for line in lines) if line]


def sentencepiece(lines: list[str], held: list[str], vocab_size: int, prefix: str, coverage: float) -> int:
    import sentencepiece as spm

    t0 = time.perf_counter()
    src = prefix + ".txt"
    Path(src).write_text("\n".join(collapsed(lines)) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=src, model_prefix=prefix, vocab_size=vocab_size, model_type="unigram",
        normalization_rule_name="identity", remove_extra_whitespaces=False, character_coverage=coverage,
        bos_id=-1, eos_id=-1, unk_id=0, minloglevel=2, max_sentence_length=1 << 20,
    )
    trained = time.perf_counter() - t0
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    return sum(len(ids) for ids in sp.encode(held)), trained


def hf(lines: list[str], held: list[str], vocab_size: int) -> int:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>",
                                      show_progress=False)
    # as HF's docs and users run it: train(files). The file is written here, as SentencePiece's is.
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        src = Path(folder) / "train.txt"
        src.write_text("\n".join(lines) + "\n", encoding="utf-8")
        tok.train([str(src)], trainer=trainer)
    trained = time.perf_counter() - t0
    return sum(len(e.ids) for e in tok.encode_batch(held)), trained


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", type=Path)
    ap.add_argument("--sizes", default="2,10", help="training sizes in MB (default: 2,10)")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--seed-size", type=int, default=1_000_000, help="our em seed pieces (default: 1000000)")
    ap.add_argument("--held-out-mb", type=float, default=0.3)
    ap.add_argument("--sp-coverage", type=float, default=0.9995,
                    help="SentencePiece's character_coverage (default: its own, 0.9995)")
    ap.add_argument("--coverage", type=float, default=None,
                    help="ours (default: --sp-coverage's; 1 keeps every character, as em did before it had one)")
    ap.add_argument("--skip-hf", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="run each size this many times (medians are printed)")
    args = ap.parse_args()
    corpus = args.corpus or default_corpus()
    sizes = [float(s) for s in args.sizes.split(",")]
    train, held = slices(corpus, sizes, args.held_out_mb)
    print(f"corpus {corpus} ({corpus.stat().st_size / 1e6:.1f} MB); held out: last {args.held_out_mb} MB, "
          f"{len(held):,} lines; vocab {args.vocab_size}")
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        for mb, lines in train.items():
            size = sum(len(line.encode("utf-8")) + 1 for line in lines) / 1e6
            runs = []
            for k in range(args.repeat):  # interleaved, so load changes hit every trainer alike
                load = os.getloadavg()[0]
                rows = {"sentencepiece": run_child(sentencepiece, lines, held, args.vocab_size, f"{tmp}/sp{mb}",
                                                   args.sp_coverage)}
                rows["tokworkbench em"] = run_child(ours, lines, held, args.vocab_size, args.seed_size,
                                                    f"{tmp}/ours{mb}.json",
                                                    args.sp_coverage if args.coverage is None else args.coverage)
                if not args.skip_hf:
                    rows["hf UnigramTrainer"] = run_child(hf, as_sentencepiece_sees(lines),
                                                          as_sentencepiece_sees(held), args.vocab_size)
                runs.append(rows)
                (sp_tokens, sp_train, sp_cpu, _), sp_time, sp_peak = rows["sentencepiece"]
                print(f"\n{size:.1f} MB training text ({len(lines):,} lines), run {k + 1}, "
                      f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
                print(f"  {'trainer':<20} {'time s':>8} {'x sp':>6} {'train s':>8} {'x sp':>6} {'peak MB':>8} "
                      f"{'x sp':>6} {'wk MB':>6} {'cpu s':>7} {'held-out tokens':>16} {'vs sp':>8}")
                for name, ((tokens, trained, cpu, workers_peak), elapsed, peak) in rows.items():
                    print(f"  {name:<20} {elapsed:8.2f} {elapsed / sp_time:6.2f} {trained:8.2f} "
                          f"{trained / sp_train:6.2f} {peak:8.0f} {peak / sp_peak:6.2f} {workers_peak:6.0f} {cpu:7.2f} "
                          f"{tokens:16,} {100 * (tokens / sp_tokens - 1):+7.2f}%")
                    report.append({"mb": size, "run": k + 1, "trainer": name, "seconds": elapsed,
                                   "train_seconds": trained, "cpu_seconds": cpu, "peak_mb": peak,
                                   "workers_peak_mb": workers_peak, "tokens": tokens,
                                   "load": load})
            if args.repeat > 1:
                print(f"  medians over {args.repeat} runs (ratio: median of each run's own ratio)")
                for name in runs[0]:
                    ratio = statistics.median(r[name][0][1] / r["sentencepiece"][0][1] for r in runs)
                    whole = statistics.median(r[name][1] / r["sentencepiece"][1] for r in runs)
                    cpu = statistics.median(r[name][0][2] / r["sentencepiece"][0][2] for r in runs)
                    print(f"  {name:<20} train {statistics.median(r[name][0][1] for r in runs):8.2f} s  "
                          f"x sp {ratio:5.2f}   whole run x sp {whole:5.2f}   cpu x sp {cpu:5.2f}")
    print("\n" + json.dumps(report))


if __name__ == "__main__":
    main()
