"""How many of spm_train's Unigram pieces `--algorithm em` makes, same text, same size.

    python benchmarks/unigram_share.py [TEXT] [--bytes N] [--vocab-size 1000] [--coverage 1.0]

TEXT defaults to tests/data/botchan.txt; `--bytes` takes its first N bytes, cut at a line end.
spm_train runs with `--model_type=unigram`, `character_coverage` as given (1.0: every character,
as ours keeps them), the nfkc rule (its default nmt_nfkc also turns tabs and other control
characters into spaces, which ours does not) and otherwise its defaults (it collapses runs of
whitespace); ours with the nfkc normalizer, its
target spm_train's vocab_size (both count <unk> <s> </s>), plus the characters spm_train never sees
(line breaks: it reads lines; a BOM), which ours keeps so that its model spells the text.
Prints the share of spm_train's pieces we have, the first 20 pieces only in each with their
scores, and where the two score cutoffs lie: a missing piece close to the cutoff is a near tie,
one far from it a real difference. `--threads 1 2 4` also trains spm_train with those
num_threads (its default is 16): its E-step sums float32 expectations a thread at a time, so its
own pieces move with the thread count, which bounds what "the same pieces" can mean.
"""

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sentencepiece as spm  # noqa: E402

from tokworkbench.core.text.normalize import normalize  # noqa: E402
from tokworkbench.core.unigram.config import EM_SEED_SIZE, UnigramConfig  # noqa: E402
from tokworkbench.core.unigram.learner import UnigramLearner  # noqa: E402


def text_of(path: Path, limit: int | None) -> str:
    data = path.read_bytes()
    if limit is not None and len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1]
    lines = data.decode("utf-8").replace("\r\n", "\n").split("\n")  # as read_text; spm_train drops the \r too
    # spm_train skips a line over max_sentence_length (4,192 bytes): neither trainer gets it
    return "\n".join(line for line in lines if len(line.encode("utf-8")) <= 4192)


def spm_pieces(text: str, vocab: int, coverage: float, threads: int = 16) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.txt"
        src.write_text(text, encoding="utf-8")
        spm.SentencePieceTrainer.train(input=str(src), model_prefix=f"{tmp}/u", vocab_size=vocab,
                                       model_type="unigram", character_coverage=coverage, minloglevel=2,
                                       normalization_rule_name="nfkc", num_threads=threads)
        sp = spm.SentencePieceProcessor(model_file=f"{tmp}/u.model")
        return {sp.id_to_piece(i): sp.get_score(i) for i in range(3, sp.get_piece_size())}


def our_pieces(text: str, target: int) -> dict[str, float]:
    learner = UnigramLearner([text], UnigramConfig(normalizer="nfkc", algorithm="em", seed_size=EM_SEED_SIZE))
    list(learner.run(vocab_size=target))
    return dict(zip(learner.state.pieces, learner.state.scores))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("text", nargs="?", default=str(ROOT / "tests" / "data" / "botchan.txt"))
    ap.add_argument("--bytes", type=int, default=None)
    ap.add_argument("--vocab-size", type=int, default=1000)
    ap.add_argument("--coverage", type=float, default=1.0)
    ap.add_argument("--threads", type=int, nargs="*", default=[], help="spm_train's num_threads to compare too")
    args = ap.parse_args()
    text = text_of(Path(args.text), args.bytes)
    theirs = spm_pieces(text, args.vocab_size, args.coverage)
    # characters spm_train never sees (line breaks; a BOM, which nmt_nfkc drops) take places of their own
    extra = len(set(normalize(text, "nfkc")) - set("".join(theirs)) - {" "})
    ours = our_pieces(text, args.vocab_size + extra)
    shared = set(ours) & set(theirs)
    print(f"{len(text.encode()):,} bytes, vocab {args.vocab_size}: shared {len(shared)}/{len(theirs)} "
          f"= {len(shared) / len(theirs):.4f} (ours {len(ours)} pieces)")
    for name, mine, other in (("ours", ours, theirs), ("spm", theirs, ours)):
        only = sorted(set(mine) - set(other), key=lambda p: -mine[p])
        longer = [s for p, s in mine.items() if len(p) > 1]
        print(f"only in {name} ({len(only)}; its lowest longer piece's score {min(longer):.4f}):")
        print("  " + "  ".join(f"{p!r} {mine[p]:.4f}" for p in only[:20]))
    gaps = sorted(abs(ours[p] - theirs[p]) for p in shared)
    print(f"score gaps on shared pieces: median {gaps[len(gaps) // 2]:.2e}, max {gaps[-1]:.2e}")
    for threads in args.threads:
        other = spm_pieces(text, args.vocab_size, args.coverage, threads)
        print(f"spm_train num_threads={threads}: shares {len(set(other) & set(theirs))}/{len(theirs)} with its "
              f"16-thread pieces; ours share {len(set(ours) & set(other))}/{len(other)} with these")


if __name__ == "__main__":
    main()
