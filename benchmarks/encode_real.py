"""Encoding speed on the real vocabularies (cl100k_base, o200k_base) against tiktoken, one thread.

    python benchmarks/encode_real.py [--text FILE ...] [--mb 4] [--repeat 3]

Loads each public encoding whose ranks file is here (see `tokworkbench/core/formats/presets.py`:
TOKWORKBENCH_DATA, ~/.cache/tokworkbench, tiktoken's cache, or the bpe-openai wheel), builds
`tiktoken.Encoding` from the same ranks with tiktoken's own pattern, encodes the first --mb MB of
each text with both on one thread (ours through the serial path, as tiktoken's
`encode_ordinary` runs), and with GitHub's `bpe-openai` (Rust; its backend called directly,
since its Python wrapper asks tiktoken, which downloads, for the special tokens), checks the
ids are identical, and prints MB/s and the ratios. Issue 26's bars: >= 1.0x tiktoken's
throughput cold, and at most 1.5x bpe-openai's time.

Times are CPU seconds of this process (`time.process_time`; both encoders run on one thread),
so that other people's jobs on a shared machine do not count. The compiled kernels (where numba
runs) are loaded once before the rounds, as tiktoken's extension is imported before them. Rounds are interleaved
(tiktoken, ours cold, ours warm) and the medians printed: the machine's speed drifts. Cold: a fresh model with an empty chunk cache (its lookup tables built before
the clock starts, as tiktoken's are when its Encoding is made); warm: the same model again,
every chunk cached. Also printed: the pre-tokenizer alone (ours, and `regex.findall`), and the
chunk cache's size and the process's peak memory.
"""

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import regex  # noqa: E402
import tiktoken  # noqa: E402
from bpe_openai import _bindings as bpe_openai  # noqa: E402

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


def prepare_tables(tok) -> None:
    """Build the model's lookup tables (merge ranks, pair hash, outside ids), which a first
    encode builds once per model; tiktoken builds its own when its Encoding is made."""
    table = tok._merge_table
    table.slots
    table.rank_of
    tok._outside_array
    tok._ranks
    table.whole_chars  # which characters rounds may start from whole (the partial-end tokens)


def main():
    ap = argparse.ArgumentParser()
    corpus = ROOT / "bench-data" / "corpus"
    ap.add_argument("--text", nargs="+", default=[str(corpus / "en-10M.txt"), str(corpus / "multi-10M.txt")])
    ap.add_argument("--mb", type=float, default=4.0, help="encode the first MB megabytes of each text")
    ap.add_argument("--repeat", type=int, default=5, help="rounds; each encoder once per round, interleaved")
    ap.add_argument("--model", nargs="+", default=["cl100k_base", "o200k_base"], help="the encodings to time")
    ap.add_argument("--max-load", type=float, default=0.5, help="each round waits (up to 5 min) for this 1-minute load")
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
    for name in args.model:
        try:
            raw, where = preset_ranks(PRESETS[name])
        except ModelFileError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        t = time.perf_counter()
        load_preset(name)
        print(f"{name} from {where}: loaded in {time.perf_counter() - t:.2f} s (wall clock)")
        enc = tiktoken_for(name, parse_ranks(raw))
        rust = bpe_openai.tokenizer_for_encoding(name)
        load_preset(name).encode_normalized(texts[0][1][:100_000])  # loads numba's cached kernels, once a process
        for label, text in texts:
            mb = len(text.encode()) / 1e6
            times = {"tiktoken": [], "bpe-openai": [], "tables": [], "cold": [], "warm": [], "split": [], "regex": []}
            same = True
            for _ in range(args.repeat):
                waited = 0
                while os.getloadavg()[0] > args.max_load and waited < 300:  # a busy machine: wait for it
                    time.sleep(5)
                    waited += 5
                if os.getloadavg()[0] > args.max_load:
                    print(f"  (a round at load {os.getloadavg()[0]:.2f}, above --max-load {args.max_load})")
                t = time.process_time()
                theirs = enc.encode_ordinary(text)
                times["tiktoken"].append(time.process_time() - t)
                t = time.process_time()
                rusts = rust.encode(text)
                times["bpe-openai"].append(time.process_time() - t)
                same = same and rusts == theirs
                fresh = load_preset(name)
                t = time.process_time()
                prepare_tables(fresh)
                times["tables"].append(time.process_time() - t)
                t = time.process_time()
                ours = fresh.encode_normalized(text)  # one thread (encode_ordinary forks on long texts)
                times["cold"].append(time.process_time() - t)
                t = time.process_time()
                warm = fresh.encode_normalized(text)
                times["warm"].append(time.process_time() - t)
                same = same and ours == theirs and warm == theirs
                store = fresh._chunk_store
                t = time.process_time()
                chunks = fresh.pre_tokenizer.split(text)
                times["split"].append(time.process_time() - t)
                t = time.process_time()
                regex.findall(fresh.pre_tokenizer.pattern, text)
                times["regex"].append(time.process_time() - t)
            tt, bo, tables, cold, warm_t, split, rx = (
                statistics.median(times[k]) for k in ("tiktoken", "bpe-openai", "tables", "cold", "warm", "split", "regex"))
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"  {label} ({mb:.1f} MB, {len(theirs):,} tokens, {len(chunks):,} chunks, "
                  f"{len(set(chunks)):,} distinct): ids identical: {same}; chunk store after it:"
                  f" {len(store):,} entries, {store.nbytes / 1e6:.1f} MB; load {load}")
            print(f"    tiktoken {mb / tt:6.2f} MB/s | ours cold {mb / cold:6.2f} MB/s = {tt / cold:.2f}x"
                  f" | warm {mb / warm_t:6.2f} MB/s = {tt / warm_t:.2f}x")
            print(f"    bpe-openai {mb / bo:6.2f} MB/s | ours cold takes {cold / bo:.2f}x its time, warm {warm_t / bo:.2f}x")
            print(f"    pre-tokenizer alone: ours {split:.2f} s, regex.findall {rx:.2f} s, tiktoken's whole encode {tt:.2f} s;"
                  f" ours cold {cold:.2f} s, warm {warm_t:.2f} s; lookup tables (once per model) {tables:.2f} s")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  peak memory of this process so far: {peak:,.0f} MB")

if __name__ == "__main__":
    main()
