"""Encoding speed on the real vocabularies (cl100k_base, o200k_base) against tiktoken, one thread.

    python benchmarks/encode_real.py [--text FILE ...] [--mb 4] [--repeat 3]

Loads each public encoding whose ranks file is here (see `tokworkbench/core/formats/presets.py`:
TOKWORKBENCH_DATA, ~/.cache/tokworkbench, tiktoken's cache, or the bpe-openai wheel), builds
`tiktoken.Encoding` from the same ranks with tiktoken's own pattern, encodes the first --mb MB of
each text with both on one thread (ours through the serial path, as tiktoken's
`encode_ordinary` runs), checks the ids are identical, and prints MB/s and the ratio. The bar
is 0.75x tiktoken's throughput.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tiktoken  # noqa: E402

from tokworkbench.core.errors import ModelFileError  # noqa: E402
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks  # noqa: E402
from tokworkbench.core.formats.tiktoken import parse_ranks  # noqa: E402


def tiktoken_for(name: str, ranks: dict) -> tiktoken.Encoding:
    """tiktoken's own definition of the encoding, with these ranks in place of its download."""
    from tiktoken_ext import openai_public

    saved = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *a, **k: ranks
    try:
        spec = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = saved
    return tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                             special_tokens=spec["special_tokens"])


def main():
    ap = argparse.ArgumentParser()
    corpus = ROOT / "bench-data" / "corpus"
    ap.add_argument("--text", nargs="+", default=[str(corpus / "en-10M.txt"), str(corpus / "multi-10M.txt")])
    ap.add_argument("--mb", type=float, default=4.0, help="encode the first MB megabytes of each text")
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each encoder once per round, interleaved")
    args = ap.parse_args()
    texts = []
    for path in map(Path, args.text):
        if not path.exists():
            print(f"skipping {path}: not here (make bench builds it)")
            continue
        raw = path.read_bytes()[: int(args.mb * 1e6)]
        texts.append((path.name, raw.decode("utf-8", errors="ignore")))
    if not texts:
        sys.exit("no text to encode")
    for name in ("cl100k_base", "o200k_base"):
        try:
            raw, where = preset_ranks(PRESETS[name])
        except ModelFileError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        t = time.perf_counter()
        load_preset(name)
        print(f"{name} from {where}: loaded in {time.perf_counter() - t:.2f} s")
        enc = tiktoken_for(name, parse_ranks(raw))
        for label, text in texts:
            mb = len(text.encode()) / 1e6
            times = {"tiktoken": [], "ours": []}
            same = True
            for _ in range(args.repeat):
                t = time.perf_counter()
                theirs = enc.encode_ordinary(text)
                times["tiktoken"].append(time.perf_counter() - t)
                fresh = load_preset(name)  # cold: no chunk cache
                t = time.perf_counter()
                ours = fresh.encode_normalized(text)  # one thread (encode_ordinary forks on long texts)
                times["ours"].append(time.perf_counter() - t)
                same = same and ours == theirs
            tt, us = statistics.median(times["tiktoken"]), statistics.median(times["ours"])
            print(f"  {label} ({mb:.1f} MB, {len(theirs):,} tokens): tiktoken {mb / tt:6.2f} MB/s, "
                  f"tokworkbench {mb / us:6.2f} MB/s, ratio {tt / us:.2f}x; ids identical: {same}")


if __name__ == "__main__":
    main()
