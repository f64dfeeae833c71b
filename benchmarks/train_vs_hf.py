"""Train byte-level BPE on a corpus with tokworkbench and with Hugging Face `tokenizers`, same run.

    python benchmarks/train_vs_hf.py [CORPUS] [--vocab-size 8192] [--split gpt4]

CORPUS defaults to ../shared/bench/corpus-10M.txt.xz (the mixed 10 MB file), decompressed into
bench-data/. Prints wall time for each, the ratio ours/HF, and whether the two agree on the
token count of a sample (same pattern, HF's in its Oniguruma-safe form; with tie-break hf the
merges are HF's own, so the counts should be equal).
"""

import argparse
import lzma
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer  # noqa: E402
from tokworkbench.core.gcpause import collector_paused  # noqa: E402
from tokworkbench.core.text.corpus import iter_documents  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from train_compare import hf_byte_level  # noqa: E402

DEFAULT_XZ = ROOT.parent / "shared" / "bench" / "corpus-10M.txt.xz"


def default_corpus() -> Path:
    out = ROOT / "bench-data" / "mixed-10M.txt"
    if not out.exists():
        out.parent.mkdir(exist_ok=True)
        with lzma.open(DEFAULT_XZ) as src:
            out.write_bytes(src.read())
    return out


def train_ours(paths, vocab_size, split, tie_break):
    t0 = time.perf_counter()
    with collector_paused():  # as `tokworkbench train` and `core.trainer.train` do
        texts = (d.text for d in iter_documents(paths))
        trainer = Trainer(texts, TrainConfig(pre_tokenizer=pre_tokenizer(split), tie_break=tie_break))
        t1 = time.perf_counter()
        for _ in trainer.run(vocab_size=vocab_size):
            pass
        t2 = time.perf_counter()
    return trainer, t1 - t0, t2 - t1


def train_hf(paths, vocab_size, split):
    tok, trainer = hf_byte_level(vocab_size, split)
    texts = [d.text for d in iter_documents(paths)]
    t0 = time.perf_counter()
    tok.train_from_iterator(texts, trainer=trainer)
    return tok, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="*")
    ap.add_argument("--vocab-size", type=int, default=8192)
    ap.add_argument("--split", default="gpt4")
    ap.add_argument("--tie-break", default="hf")
    args = ap.parse_args()
    paths = args.corpus or [default_corpus()]
    size = sum(os.path.getsize(p) for p in paths)
    print(f"corpus: {', '.join(map(str, paths))} ({size / 1e6:.1f} MB), byte units, split={args.split}, "
          f"vocab={args.vocab_size}, tie-break={args.tie_break}, cores={os.cpu_count()}")
    ours, prep, merge = train_ours(paths, args.vocab_size, args.split, args.tie_break)
    total = prep + merge
    print(f"tokworkbench      : {total:7.2f} s  (read+pre-tokenize+count {prep:.2f} s, "
          f"{len(ours.merges)} merges {merge:.2f} s, {len(ours.merges) / merge:,.0f} merges/s)")
    hf, hf_time = train_hf(paths, args.vocab_size, args.split)
    print(f"HF tokenizers     : {hf_time:7.2f} s  (vocab {hf.get_vocab_size()})")
    print(f"ratio ours / HF   : {total / hf_time:7.2f}x  (lower is better; 1.00x = as fast)")
    text_sample = [d.text for d in iter_documents(paths)][0][:200_000]
    ours_n = len(ours.model().encode_ordinary(text_sample))
    hf_n = len(hf.encode(text_sample).ids)
    print(f"tokens on first 200k chars: ours {ours_n:,}, HF {hf_n:,}")


if __name__ == "__main__":
    main()
