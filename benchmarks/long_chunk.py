"""Encoding one long chunk: time against chunk length, beside HF `tokenizers` and tiktoken.

    python benchmarks/long_chunk.py [CORPUS] [--sizes 10000,100000,1000000,5000000]

Each text below is one chunk from its first character to its last:

- `none`: a `--split none` model (one chunk per document) encoding a prefix of the corpus;
- `gpt4 letters`: a gpt4 model encoding the corpus with everything but letters removed, which
  its `\\p{L}++` matches whole (Latin, Cyrillic and CJK, about 1.5 bytes a character);
- `gpt4 a*N`: the same model encoding "a" * N.

The peers run as their users run them: HF `Tokenizer.from_file` on our HF export, then
`.encode(text)`; tiktoken an `Encoding` built from our tiktoken export (`tiktoken_encoding`),
then `.encode_ordinary(text)` (tiktoken cannot express `--split none`). Ours is a fresh
`Tokenizer` each time (no chunk cache), `.encode_ordinary(text)`. Ids are checked identical.
"plain loop" is the quadratic merge loop every chunk went through before (still used below 192
units), up to 100k characters. Then two model-file cases: the tiktoken export of a model trained
on 5M "a" with 25 merges (its check runs BPE on every token, the longest 5 MB), and loading a
ranks file with a 16 KB token (ours: `load_any`; tiktoken: `load_tiktoken_bpe` and `Encoding`).

Times are the best of `--repeat` runs (one run from 1M up). CORPUS defaults to the mixed 10 MB
file (../shared/bench/corpus-10M.txt.xz, decompressed into bench-data/).
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from train_vs_hf import default_corpus  # noqa: E402

from tokworkbench.core import TrainConfig, pre_tokenizer  # noqa: E402
from tokworkbench.core.bpe.encode import _merge_short  # noqa: E402
from tokworkbench.core.bpe.model import Tokenizer  # noqa: E402
from tokworkbench.core.bpe.trainer import train  # noqa: E402
from tokworkbench.core.formats.tiktoken import tiktoken_encoding  # noqa: E402
from tokworkbench.core.registry.export import export  # noqa: E402
from tokworkbench.core.registry.load import load_any  # noqa: E402

PLAIN_UP_TO = 100_000


def best_of(repeat: int, run) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t)
    return best, out


def fresh(tok: Tokenizer) -> Tokenizer:
    return Tokenizer(tok.units, tok.normalizer, tok.pre_tokenizer, tok.tie_break, tok.base, tok.merges)


def encode_row(label: str, tok: Tokenizer, hf, tt, text: str, repeat: int) -> list[str]:
    repeat = repeat if len(text) < 1_000_000 else 1
    ours_s, ours = best_of(repeat, lambda: fresh(tok).encode_ordinary(text))
    cells = [label, f"{len(text):,}", f"{len(text.encode()):,}", f"{ours_s:.3f}"]
    same = True
    for peer in (hf, tt):
        if peer is None:
            cells += ["n/a", ""]
            continue
        s, ids = best_of(repeat, lambda: peer(text))
        same = same and ids == ours
        cells += [f"{s:.3f}", f"{ours_s / s:.2f}x"]
    if len(text) <= PLAIN_UP_TO:
        rank = {a << 32 | b: r for r, (a, b) in enumerate(tok.merges)}
        s, ids = best_of(1, lambda: _merge_short(list(text.encode()), rank.get, len(tok.merges), 256))
        same = same and ids == ours
        cells.append(f"{s:.3f}")
    else:
        cells.append("-")
    cells.append("yes" if same else "NO")
    return cells


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " if i == 0 else " ---: " for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?")
    ap.add_argument("--sizes", default="10000,100000,1000000,5000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--vocab-size", type=int, default=8192)
    args = ap.parse_args()
    import tiktoken
    import tokenizers

    sizes = [int(s) for s in args.sizes.split(",")]
    corpus = Path(args.corpus) if args.corpus else default_corpus()
    text = corpus.read_text(encoding="utf-8")
    letters = "".join(regex.findall(r"\p{L}++", text))
    need = max(sizes)
    prose = (text * (need // len(text) + 1))[:need]
    letters = (letters * (need // len(letters) + 1))[:need]
    print(f"tiktoken {tiktoken.__version__}, tokenizers {tokenizers.__version__}, corpus {corpus.name}")

    t0 = time.perf_counter()
    paragraphs = [p for p in text[2_000_000:3_000_000].split("\n\n") if p]
    none = train(paragraphs, TrainConfig(pre_tokenizer=pre_tokenizer("none")), vocab_size=args.vocab_size).model()
    gpt4 = train([text[:3_000_000]], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")),
                 vocab_size=args.vocab_size).model()
    print(f"trained a none and a gpt4 model ({args.vocab_size} tokens) in {time.perf_counter() - t0:.1f} s\n")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        peers = {}
        for name, tok in (("none", none), ("gpt4", gpt4)):
            export(tok, "hf", tmp / f"{name}.json")
            hf = tokenizers.Tokenizer.from_file(str(tmp / f"{name}.json"))
            tt = None
            if tok.pre_tokenizer.pattern is not None:
                export(tok, "tiktoken", tmp / f"{name}.tiktoken")
                enc = tiktoken_encoding(tmp / f"{name}.tiktoken")
                tt = enc.encode_ordinary
            peers[name] = (lambda s, hf=hf: hf.encode(s).ids, tt)
        for label, tok, source in (("none", none, prose), ("gpt4 letters", gpt4, letters), ("gpt4 a*N", gpt4, None)):
            for n in sizes:
                chunk = "a" * n if source is None else source[:n]
                assert len(tok.pre_tokenizer.split(chunk)) == 1
                rows.append(encode_row(label, tok, *peers[tok.pre_tokenizer.name], chunk, args.repeat))
                print("  " + " | ".join(rows[-1]), flush=True)
        print()
        print(table(["text", "chars", "bytes", "ours s", "HF s", "ours/HF", "tiktoken s", "ours/tiktoken",
                     "plain loop s", "same ids"], rows))

        # -- model files with long tokens ------------------------------------------------------
        files = []
        t = time.perf_counter()
        many_a = train(["a" * 5_000_000], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")), merges=25).model()
        trained = time.perf_counter() - t
        s, _ = best_of(1, lambda: export(many_a, "tiktoken", tmp / "a.tiktoken"))
        longest = max(map(len, many_a.ranked_tokens))
        files.append(["tiktoken export, 5M 'a', 25 merges", f"{longest:,}", f"{s:.3f}", "", ""])
        print(f"\n(training on 5M 'a' with 25 merges took {trained:.2f} s)")

        a16 = train(["a" * 16384], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")), merges=14).model()
        export(a16, "tiktoken", tmp / "a16.tiktoken")
        ours_s, loaded = best_of(args.repeat, lambda: load_any(tmp / "a16.tiktoken"))
        assert loaded.merges == a16.merges
        os.environ["TIKTOKEN_CACHE_DIR"] = ""  # load_tiktoken_bpe caches files by path otherwise
        from tiktoken.load import load_tiktoken_bpe

        def tiktoken_load():
            ranks = load_tiktoken_bpe(str(tmp / "a16.tiktoken"))
            return tiktoken.Encoding(name="a16", pat_str=gpt4.pre_tokenizer.pattern, mergeable_ranks=ranks,
                                     special_tokens={})
        theirs_s, _ = best_of(args.repeat, tiktoken_load)
        files.append(["load a ranks file with a 16 KB token", "16,384", f"{ours_s:.3f}", f"{theirs_s:.3f}",
                      f"{ours_s / theirs_s:.1f}x"])
        print()
        print(table(["model file", "longest token (bytes)", "ours s", "tiktoken s", "ours/tiktoken"], files))


if __name__ == "__main__":
    main()
