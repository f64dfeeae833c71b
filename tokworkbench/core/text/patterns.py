"""The preset split patterns, exactly as tiktoken publishes them, and metaspace's cut.

Apart from pretokenize.py so that the numpy splitters (fastsplit.py), which pretokenize.py uses,
can read them without an import cycle.
"""

GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
# Llama 3's (llama_models/llama3/tokenizer.py): cl100k's but for the end of a text, where a
# run of spaces after a newline is a chunk of its own ("\r " is "\r", " "; cl100k keeps it whole)
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
# Mistral's tekken.json (tekken_240718, tekken_240911): o200k's with no contractions, one digit a chunk
TEKKEN_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Metaspace (SentencePiece's and HF's `Metaspace(replacement="▁", prepend_scheme="always",
# split=True)`) is not a regex over the text: it first rewrites it (every space becomes ▁, and a
# ▁ is put in front unless the text already starts with one), then cuts before each ▁. Its
# "pattern" is that cut, over the rewritten text; chunks therefore join to the rewritten text.
METASPACE = "metaspace"
META = "\u2581"
METASPACE_PATTERN = f"{META}[^{META}]*|[^{META}]+"

PRESETS = {"none": None, "gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN, "o200k": O200K_PATTERN, "llama3": LLAMA3_PATTERN, "tekken": TEKKEN_PATTERN,
           METASPACE: METASPACE_PATTERN}
