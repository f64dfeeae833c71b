"""Ranks files whose own library is known, recognised by their SHA-256: the pattern and special
tokens their library gives them, which a bare ranks file does not carry.

Llama 3's and Llama 4's `tokenizer.model` and Whisper's `multilingual.tiktoken` are tiktoken
ranks with nothing beside them; their projects' code (llama_models/llama3/tokenizer.py,
llama4/tokenizer.py, whisper/tokenizer.py) supplies the pattern and numbers the special tokens
after the ranks. Knowing them by content means `-m tokenizer.model` opens as its library runs it,
with no `--split` to guess; `--split` and `--special` still override. The public OpenAI
encodings (presets.py) are known the same way when opened as a file.
"""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownRanks:
    title: str  # what the model is, for describe lines
    split: str  # our pre-tokenizer preset that splits as the library's pattern does
    specials: Callable[[int], dict[str, int]]  # from the number of ranks: the special tokens and their ids


def _numbered(names: list[str], first: int) -> dict[str, int]:
    return {name: first + i for i, name in enumerate(names)}


def _llama3_specials(n_ranks: int) -> dict[str, int]:
    """llama_models/llama3/tokenizer.py: twelve named, the rest of 256 reserved from number 2."""
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
             "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
             "<|eot_id|>", "<|python_tag|>", "<|image|>"]
    reserved = [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return _numbered(named + reserved, n_ranks)


def _reserved(group: str, count: int, start: int) -> list[str]:
    return [f"<|{group}_reserved_special_token_{i}|>" for i in range(start, start + count)]


def _llama4_specials(n_ranks: int) -> dict[str, int]:
    """llama_models/llama4/tokenizer.py: BASIC + text post-train + vision + reasoning, then
    plain reserved tokens up to 2048."""
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    text = (["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
            + _reserved("text_post_train", 6, 0)
            + ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"]
            + _reserved("text_post_train", 61, 8))
    vision = (["<|image_start|>", "<|image_end|>"] + _reserved("vision", 2, 0)
              + ["<|tile_x_separator|>", "<|tile_y_separator|>"] + _reserved("vision", 4, 2)
              + ["<|image|>"] + _reserved("vision", 1, 6) + ["<|patch|>"] + _reserved("vision", 1041, 7))
    reasoning = _reserved("reasoning", 8, 0) + ["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    named = basic + text + vision + reasoning
    return _numbered(named + [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))], n_ranks)


# whisper/tokenizer.py LANGUAGES, in its order; a multilingual model takes the first 99
WHISPER_LANGUAGES = ["en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue"]


def _whisper_specials(n_ranks: int, languages: int = 99) -> dict[str, int]:
    """whisper/tokenizer.py get_encoding: its default of 99 languages (large-v3 passes 100,
    which moves every special token after the languages by one)."""
    names = (["<|endoftext|>", "<|startoftranscript|>"] + [f"<|{code}|>" for code in WHISPER_LANGUAGES[:languages]]
             + ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>",
                "<|notimestamps|>"] + [f"<|{i * 0.02:.2f}|>" for i in range(1501)])
    return _numbered(names, n_ranks)


def _fixed(specials: dict[str, int]) -> Callable[[int], dict[str, int]]:
    return lambda _n: dict(specials)


KNOWN_RANKS: dict[str, KnownRanks] = {
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": KnownRanks(
        "Llama 3 (llama_models/llama3/tokenizer.model)", "llama3", _llama3_specials),
    "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed": KnownRanks(
        "Llama 4 (llama_models/llama4/tokenizer.model)", "o200k", _llama4_specials),
    "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126": KnownRanks(
        "Whisper multilingual (whisper/assets/multilingual.tiktoken)", "gpt2", _whisper_specials),
}
# the public OpenAI encodings, by name: presets.py opens them by name, and as files they are known here
OPENAI_RANKS: dict[str, tuple[str, KnownRanks]] = {
    "r50k_base": ("306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                  KnownRanks("r50k_base (GPT-2)", "gpt2", _fixed({"<|endoftext|>": 50256}))),
    "cl100k_base": ("223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                    KnownRanks("cl100k_base", "gpt4", _fixed({
                        "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                        "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}))),
    "o200k_base": ("446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                   KnownRanks("o200k_base", "o200k", _fixed({"<|endoftext|>": 199999, "<|endofprompt|>": 200018}))),
}


KNOWN_RANKS.update({sha: known for sha, known in OPENAI_RANKS.values()})


def known_ranks(sha256: str) -> KnownRanks | None:
    return KNOWN_RANKS.get(sha256)
