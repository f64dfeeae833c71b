"""What Hugging Face's tokenizer.json keeps the same way for every model type: its regex
dialect, where roles live (BOS/EOS in a `TemplateProcessing` post-processor, PAD as the padding
token, UNK as the model's unk_token), and the check that a pattern splits alike in Oniguruma.
"""

import regex

from tokworkbench.core.errors import ExportError, TokWorkbenchError
from tokworkbench.core.files.limits import is_text
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text.pretokenize import PreTokenizer

HF_POSSESSIVE_INTERVAL = regex.compile(r"(?<!\\)(\{\d+(?:,\d*)?\})\+")


def hf_pattern(pattern: str) -> str:
    return HF_POSSESSIVE_INTERVAL.sub(r"\1", pattern)


def is_hf_tokenizer(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict)


def read_roles(doc: dict, model: dict, specials: set[str]) -> Roles:
    """Roles from where HF keeps them (see the module docstring); a part that is not ours to
    read (another post-processor, a token that is not special) gives no role, not an error."""
    found: dict[str, str] = {}
    known = lambda name: is_text(name) and name in specials  # noqa: E731 - a name may be any JSON value
    post = doc.get("post_processor")
    single = post.get("single") if isinstance(post, dict) and post.get("type") == "TemplateProcessing" else None
    if isinstance(single, list) and all(isinstance(p, dict) and len(p) == 1 for p in single):
        kinds = [next(iter(p)) for p in single]
        names = [(p[k] or {}).get("id") if isinstance(p[k], dict) else None for p, k in zip(single, kinds)]
        if kinds.count("Sequence") == 1:
            at = kinds.index("Sequence")
            if at == 1 and kinds[0] == "SpecialToken" and known(names[0]):
                found["bos"] = names[0]
            if at == len(kinds) - 2 and kinds[-1] == "SpecialToken" and known(names[-1]):
                found["eos"] = names[-1]
    padding = doc.get("padding")
    if isinstance(padding, dict) and known(padding.get("pad_token")):
        found["pad"] = padding["pad_token"]
    if known(model.get("unk_token")):
        found["unk"] = model["unk_token"]
    try:
        return Roles.of(found)
    except TokWorkbenchError:  # two roles on one token: keep none rather than guess
        return Roles()


# regex-module syntax that Oniguruma lacks or reads otherwise: word-boundary \m \M, \h (a hex
# digit there), \K, \N{NAME}, fuzzy matching, recursion and subroutine calls, branch reset,
# V1 set operations, property values with "=", and inline flags other than i and x.
_NOT_ONIGURUMA = regex.compile(r"""
      \\[mMhHKN]                      # \m \M word edges, \h \H, \K, \N{NAME}
    | \{e[<=]                          # fuzzy matching
    | \(\?(?:&|P>|R\)|[0-9]+\)|\||\(DEFINE)   # subroutine calls, recursion, branch reset
    | \(\?[ix-]*[^ix:)<=!#>'P-]           # inline flags other than i and x: (?V1) (?r) (?s) (?m) (?f) …
    | \[[^\]]*(?:--|&&|\|\||~~)          # set operations
    | \\p\{[^}]*[=:]                    # \p{Script=Latin}
""", regex.VERBOSE)
# Text the pattern is tried on, in both engines, before an export: scripts, digits, marks,
# emoji, apostrophes, runs of spaces, tabs and line ends of every kind.
_PROBE = (
    "Hello, World! It's 1 12 123 1234 12345 3.14 1,000 $5 #tag @me x_y a-b a.b i've YOU'LL he'd\n"
    "  leading  two   three\tspaces\t\ttabs \n\n\r\n \r\u00a0nbsp\u3000ideographic\u2009thin\u000b\u000c\n"
    "Straße ÄÖÜ über ﬁ ① Ⅻ e\u0301 é ‘quoted’ “double” — dash… ١٢٣ ०१२ 漢字 かな カナ 한국어 Ελληνικά "
    "русский مرحبا नमस्ते 😀 👋🏽 👨\u200d👩\u200d👧 🇯🇵 \u200b\ufeff\x00\x07 def f(x):\n    return x**2  # c\n"
    "aaaaaaaaaaaa <|endoftext|> trailing   "
)


def check_hf_pattern(pre: PreTokenizer) -> None:
    """Refuse a custom pattern that HF's Oniguruma cannot read, or reads differently from the
    regex module: known regex-only syntax first; then, when `tokenizers` is installed, the pattern
    is compiled by it and both engines split a probe text, which must come out the same."""
    if pre.pattern is None or pre.is_preset_pattern:
        return
    found = _NOT_ONIGURUMA.search(pre.pattern.replace("\\\\", "__"))  # an escaped backslash is no escape
    if found:
        raise ExportError(f"HF's regex engine (Oniguruma) does not read {found.group()!r} in this pattern "
                          "as the regex module does; rewrite the pattern without it")
    try:
        from tokenizers import Regex, pre_tokenizers
    except ImportError:
        return
    try:
        split = pre_tokenizers.Split(Regex(hf_pattern(pre.pattern)), behavior="isolated")
        theirs = [piece for piece, _ in split.pre_tokenize_str(_PROBE)]
    except Exception as exc:  # tokenizers raises plain Exception for a pattern it cannot compile
        raise ExportError(f"HF's regex engine (Oniguruma) cannot read this pattern: {exc}") from None
    ours = pre.split(_PROBE)
    if theirs != ours:
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        ours_at = ours[at] if at < len(ours) else None
        theirs_at = theirs[at] if at < len(theirs) else None
        raise ExportError(f"HF's regex engine (Oniguruma) splits text differently with this pattern "
                          f"(chunk {at}: {ours_at!r} here, {theirs_at!r} in HF); rewrite it for both engines")


def post_processor_of(tok: Model) -> dict | None:
    """BOS $A EOS for one sequence (each where the model has the role), and the same around
    $B for a pair, as a TemplateProcessing."""
    ids = tok.special_ids
    bos, eos = tok.roles.bos, tok.roles.eos
    if bos is None and eos is None:
        return None

    def seq(name: str, type_id: int) -> list[dict]:
        around = [{"SpecialToken": {"id": bos, "type_id": type_id}}] if bos else []
        after = [{"SpecialToken": {"id": eos, "type_id": type_id}}] if eos else []
        return around + [{"Sequence": {"id": name, "type_id": type_id}}] + after

    return {"type": "TemplateProcessing", "single": seq("A", 0), "pair": seq("A", 0) + seq("B", 1),
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in (bos, eos) if t}}


def padding_of(tok: Model) -> dict | None:
    pad = tok.roles.pad
    if pad is None:
        return None
    return {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
            "pad_id": tok.special_ids[pad], "pad_type_id": 0, "pad_token": pad}


def hf_added_ids(contents: list[str], vocab: dict[str, int]) -> list[int]:
    """The ids HF gives a file's added tokens, which it reads but does not take from the file
    (`AddedVocabulary::add_tokens`): in the file's order, a token the model's vocabulary holds
    takes its id there; any other takes the vocabulary's size, or one past the largest id given
    so far once that is past it. A file HF wrote has those ids anyway; an edited one may not."""
    out: list[int] = []
    size, largest = len(vocab), None
    for content in contents:
        tid = vocab.get(content)
        if tid is None:
            tid = size if largest is None or (largest < size and size) else largest + 1
        largest = tid if largest is None else max(largest, tid)
        out.append(tid)
    return out
