"""Encoding throughput against tiktoken with the same ranks and pattern, in one process.

    python benchmarks/encode_vs_tiktoken.py [TRAIN_CORPUS] [--text FILE] [--vocab-size 8192]

Trains a byte-level gpt4 model on TRAIN_CORPUS (default bench-data/corpus/en-10M.txt, else the
mixed 10 MB file), exports it to tiktoken, encodes --text (default: the same file) with both,
checks the ids are identical, and prints MB/s and the ratio. Both run on one thread (ours through
`encode_normalized`, the serial path; `encode_ordinary` would fork workers on a long text), and
times are CPU seconds of this process, so other jobs on a shared machine do not count.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from train_vs_hf import default_corpus  # noqa: E402

from tokworkbench.core import TrainConfig, pre_tokenizer  # noqa: E402
from tokworkbench.core.bpe.trainer import train  # noqa: E402
from tokworkbench.core.formats.tiktoken import tiktoken_encoding  # noqa: E402
from tokworkbench.core.registry.export import export  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?")
    ap.add_argument("--text")
    ap.add_argument("--vocab-size", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=5, help="rounds; each encoder once per round, interleaved")
    args = ap.parse_args()
    en10 = ROOT / "bench-data" / "corpus" / "en-10M.txt"
    corpus = Path(args.corpus) if args.corpus else (en10 if en10.exists() else default_corpus())
    text = Path(args.text or corpus).read_text(encoding="utf-8")
    t0 = time.perf_counter()
    tok = train([text], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), tie_break="lexmin"),
                vocab_size=args.vocab_size).model()
    print(f"trained {len(tok.merges)} merges on {corpus.name} in {time.perf_counter() - t0:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        export(tok, "tiktoken", Path(tmp) / "m.tiktoken")
        enc = tiktoken_encoding(Path(tmp) / "m.tiktoken")
    mb = len(text.encode()) / 1e6
    times = {"tiktoken": [], "cold": [], "warm": []}
    same = True
    # interleaved rounds and medians: this machine's speed drifts by a third between minutes
    for _ in range(args.repeat):
        t = time.process_time()
        theirs = enc.encode_ordinary(text)
        times["tiktoken"].append(time.process_time() - t)
        fresh = tok.__class__(tok.units, tok.normalizer, tok.pre_tokenizer, tok.tie_break, tok.base, tok.merges)
        t = time.process_time()
        ours = fresh.encode_normalized(text)  # cold: no chunk cache (one thread)
        times["cold"].append(time.process_time() - t)
        t = time.process_time()
        fresh.encode_normalized(text)  # warm: every chunk cached
        times["warm"].append(time.process_time() - t)
        same = same and ours == theirs
    tt, cold, warm = (statistics.median(times[k]) for k in ("tiktoken", "cold", "warm"))
    print(f"text: {mb:.1f} MB, {len(ours):,} tokens, ids identical to tiktoken: {same}"
          f" (medians of {args.repeat} interleaved rounds)")
    print(f"tiktoken encode_ordinary : {mb / tt:6.2f} MB/s")
    print(f"tokworkbench (cold cache): {mb / cold:6.2f} MB/s   ratio {tt / cold:.2f}x tiktoken's throughput")
    print(f"tokworkbench (warm cache): {mb / warm:6.2f} MB/s   ratio {tt / warm:.2f}x")


if __name__ == "__main__":
    main()
