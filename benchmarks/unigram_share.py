"""Whether `--algorithm em` makes spm_train's Unigram model: same text, same options.

    python benchmarks/unigram_share.py [TEXT] [--bytes N] [--vocab-size 1000] [--coverage 0.9995]
                                       [--threads 16 1 2] [--rule identity]

TEXT defaults to tests/data/botchan.txt; `--bytes` takes its first N bytes, cut at a line end.
spm_train runs with `--model_type=unigram`, the rule (`identity` is our normalizer `none`, `nfkc`
our `nfkc`), the coverage and num_threads given, and otherwise its defaults; ours with the same.
Prints, for each thread count, how many of spm_train's ids have its piece and its float32 score
in ours (identical models: all of them), the first differences, and each trainer's time.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import sentencepiece as spm  # noqa: E402

from tokworkbench.core.unigram.config import EM_SEED_SIZE, UnigramConfig  # noqa: E402
from tokworkbench.core.unigram.learner import UnigramLearner  # noqa: E402

OURS = {"identity": "none", "nfkc": "nfkc"}


def text_of(path: Path, limit: int | None) -> str:
    data = path.read_bytes()
    if limit is not None and len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1]
    return data.decode("utf-8")


def spm_model(text: str, vocab: int, coverage: float, rule: str, threads: int) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.txt"
        src.write_bytes(text.encode("utf-8"))
        spm.SentencePieceTrainer.train(input=str(src), model_prefix=f"{tmp}/u", vocab_size=vocab,
                                       model_type="unigram", character_coverage=coverage, minloglevel=2,
                                       normalization_rule_name=rule, num_threads=threads)
        sp = spm.SentencePieceProcessor(model_file=f"{tmp}/u.model")
        return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]


def our_model(text: str, vocab: int, coverage: float, rule: str, threads: int) -> list[tuple[str, float]]:
    learner = UnigramLearner([text], UnigramConfig(normalizer=OURS[rule], algorithm="em", seed_size=EM_SEED_SIZE,
                                                   character_coverage=coverage, num_threads=threads))
    list(learner.run(vocab_size=vocab))
    return [(p, float(np.float32(s))) for p, s in learner.model().pieces]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("text", nargs="?", default=str(ROOT / "tests" / "data" / "botchan.txt"))
    ap.add_argument("--bytes", type=int, default=None)
    ap.add_argument("--vocab-size", type=int, default=1000)
    ap.add_argument("--coverage", type=float, default=0.9995)
    ap.add_argument("--rule", choices=sorted(OURS), default="identity")
    ap.add_argument("--threads", type=int, nargs="+", default=[16])
    args = ap.parse_args()
    text = text_of(Path(args.text), args.bytes)
    print(f"{len(text.encode()):,} bytes, vocab {args.vocab_size}, coverage {args.coverage}, rule {args.rule}")
    for threads in args.threads:
        started = time.perf_counter()
        theirs = spm_model(text, args.vocab_size, args.coverage, args.rule, threads)
        spm_took = time.perf_counter() - started
        started = time.perf_counter()
        ours = our_model(text, args.vocab_size, args.coverage, args.rule, threads)
        took = time.perf_counter() - started
        same = sum(a == b for a, b in zip(ours, theirs))
        verdict = "identical" if ours == theirs else f"{same:,} of {len(theirs):,} ids the same"
        print(f"num_threads={threads}: {verdict} (spm_train {spm_took:.1f} s, ours {took:.1f} s in-process)")
        for k, (a, b) in enumerate(zip(ours, theirs)):
            if a != b:
                print(f"  first difference at id {k}: ours {a}, spm_train {b}")
                break


if __name__ == "__main__":
    main()
