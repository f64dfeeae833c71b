"""Encoding the tokenizer files people have (Llama 3, Llama 4, Whisper, Mistral's tekken) against
tiktoken, which their own projects run them with, one thread each, on an idle machine.

    python benchmarks/encode_wild.py [--text FILE] [--rounds 3] [--max-load 0.5]
        [--llama3 PATH] [--llama4 PATH] [--whisper PATH] [--tekken PATH]

The files come from the projects' own packages (`pip download --no-deps llama-models
openai-whisper mistral-common`); a file not given is skipped. tiktoken gets each library's own
pattern and ranks (for tekken: the first vocab_size − num_special ranks, as mistral-common
builds it, and our ids are checked against tiktoken's plus the offset). Ours opens the file as
`-m FILE` does and encodes through the single-thread path (`encode_normalized`; the command
line forks on long texts).

Times are CPU seconds (`time.process_time`) of the encode alone on a model whose tables are
built (both libraries build theirs once per model; ours are printed apart as "tables").
Rounds are interleaved, tiktoken then ours for each file, and each round waits for the 1-minute
load average to fall to --max-load: on 2 cores a busy machine slows the peers and us unequally.
A round whose load was above it prints no ratio. The medians of the rounds are printed last.
"""

import argparse
import base64
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tiktoken  # noqa: E402
from quiet import wait_for_quiet  # noqa: E402
from tiktoken.load import load_tiktoken_bpe  # noqa: E402

from tokworkbench.core.registry.load import load_any  # noqa: E402

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
O200K = (r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
         r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
         r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
WHISPER = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def tiktoken_of(kind: str, path: Path) -> tuple[tiktoken.Encoding, int]:
    """The library's own Encoding for the file, and the offset its ids have in the file's ids."""
    if kind == "tekken":
        doc = json.loads(path.read_text(encoding="utf-8"))
        n, size = doc["config"]["default_num_special_tokens"], doc["config"]["default_vocab_size"]
        ranks = {base64.b64decode(v["token_bytes"]): v["rank"] for v in doc["vocab"][: size - n]}
        return tiktoken.Encoding("tekken", pat_str=doc["config"]["pattern"], mergeable_ranks=ranks,
                                 special_tokens={}), n
    pattern = {"llama3": LLAMA3, "llama4": O200K, "whisper": WHISPER}[kind]
    return tiktoken.Encoding(kind, pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={}), 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--text", default=str(ROOT / "bench-data" / "corpus" / "en-10M.txt"))
    ap.add_argument("--mb", type=float, default=0, help="only the first MB megabytes (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-load", type=float, default=0.5)
    ap.add_argument("--patience", type=float, default=600, help="seconds a round waits for the load to fall")
    for kind in ("llama3", "llama4", "whisper", "tekken"):
        ap.add_argument(f"--{kind}", type=Path)
    args = ap.parse_args()
    text = Path(args.text).read_text(encoding="utf-8", errors="replace")
    if args.mb:
        text = text[: int(args.mb * 1e6)]
    mb = len(text.encode()) / 1e6
    cases = [(k, getattr(args, k)) for k in ("llama3", "llama4", "whisper", "tekken") if getattr(args, k)]
    if not cases:
        sys.exit("no tokenizer file given (--llama3, --llama4, --whisper, --tekken)")
    print(f"{Path(args.text).name}: {mb:.1f} MB; {args.rounds} rounds, each waits for load <= {args.max_load}")
    peers = {kind: tiktoken_of(kind, path) for kind, path in cases}
    times: dict[str, dict[str, list[float]]] = {k: {"tiktoken": [], "ours": [], "tables": []} for k, _ in cases}
    for r in range(args.rounds):
        for kind, path in cases:
            before = wait_for_quiet(args.max_load, args.patience)
            enc, offset = peers[kind]
            t = time.process_time()
            theirs = enc.encode_ordinary(text)
            tt = time.process_time() - t
            ours_model = load_any(path)
            t = time.process_time()
            ours_model.encode_normalized(text[:10_000])  # builds the lookup tables (tiktoken's are built)
            tables = time.process_time() - t
            t = time.process_time()
            ours = ours_model.encode_normalized(text)
            to = time.process_time() - t
            after = os.getloadavg()[0]
            same = ours == [i + offset for i in theirs]
            ok = before <= args.max_load
            if ok:
                times[kind]["tiktoken"].append(tt)
                times[kind]["ours"].append(to)
                times[kind]["tables"].append(tables)
            ratio = f"ours {mb / to:5.2f} MB/s = {tt / to:.2f}x tiktoken" if ok else "no ratio: the machine was busy"
            print(f"round {r + 1} {kind:8} tiktoken {tt:5.2f} s, ours {to:5.2f} s (+ tables {tables:.2f} s); {ratio}; "
                  f"ids identical: {same}; load {before:.2f} before, {after:.2f} after", flush=True)
    print("medians over the idle rounds:")
    for kind, _ in cases:
        got = times[kind]
        if not got["ours"]:
            print(f"  {kind:8} no idle round")
            continue
        tt, to, tables = (statistics.median(got[k]) for k in ("tiktoken", "ours", "tables"))
        print(f"  {kind:8} tiktoken {mb / tt:5.2f} MB/s, ours {mb / to:5.2f} MB/s = {tt / to:.2f}x "
              f"({tt / (to + tables):.2f}x with our tables built inside the clock); {len(got['ours'])} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
