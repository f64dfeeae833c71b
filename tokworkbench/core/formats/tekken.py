"""Mistral's tekken.json: tiktoken ranks in JSON, read as mistral-common's `Tekkenizer` reads them.

The file lists `vocab` entries {rank, token_bytes (base64), token_str} with rank = position, the
first 256 the single bytes; `config` gives the split `pattern`, `default_vocab_size` and
`default_num_special_tokens`. Only the first `default_vocab_size - default_num_special_tokens`
entries are used (tekken_240718 lists 150,000 and uses 130,072), and their ids come after the
special tokens': id = rank + num_special. The special tokens are the file's `special_tokens`
(rank, token_str), or for a file of version v7 or older without them mistral-common's fixed
list; ids they leave free up to num_special are `<SPECIAL_{id}>` fillers. mistral-common
encodes with tiktoken and no special tokens, so a special token's string in the text is plain
text: `encode_ordinary` gives its ids.
"""

import base64
import binascii

from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.errors import ForeignModelError
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, check_token_length, describe_json, is_count, is_text, short
from tokworkbench.core.formats.tiktoken import ranks_model
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text.pretokenize import from_pattern

FILLER = "<SPECIAL_{id}>"
# mistral-common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS: files up to v7 may leave them out
DEPRECATED_SPECIALS = ("<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                       "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
                       "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
                       "[TOOL_CONTENT]")
VERSIONS = ("v1", "v2", "v3", "v7", "v11", "v13", "v15")
_ROLE_TOKENS = {"bos": "<s>", "eos": "</s>", "pad": "<pad>", "unk": "<unk>"}


def is_tekken(doc) -> bool:
    """A tekken file by its content: a `config` with tekken's counts beside a `vocab` list."""
    return (isinstance(doc, dict) and isinstance(doc.get("config"), dict) and isinstance(doc.get("vocab"), list)
            and "default_num_special_tokens" in doc["config"])


def from_tekken(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES, digest: str | None = None) -> Tokenizer:
    """The model of a tekken file; `digest` (the file's SHA-256) keeps its recovered merges in
    the derived cache, as for a ranks file."""
    config = doc["config"]
    pattern, size, n_special = config.get("pattern"), config.get("default_vocab_size"), config.get("default_num_special_tokens")
    if not is_text(pattern):
        raise ForeignModelError(f"tekken: 'config.pattern' must be a string, not {describe_json(pattern)}")
    if not is_count(size) or not is_count(n_special):
        raise ForeignModelError("tekken: 'config.default_vocab_size' and 'config.default_num_special_tokens' "
                                f"must be whole numbers, not {short(size)} and {short(n_special)}")
    vocab = doc["vocab"]
    inner = size - n_special
    if not 256 <= inner <= len(vocab):
        raise ForeignModelError(
            f"tekken: default_vocab_size {size} less default_num_special_tokens {n_special} leaves {inner} "
            f"ranked tokens, but the file lists {len(vocab)}; mistral-common needs 256 to {len(vocab)}")
    specials = _specials(doc, config.get("version"), n_special)
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(vocab[:inner]):
        if not (isinstance(entry, dict) and entry.get("rank") == i and is_text(entry.get("token_bytes"))):
            raise ForeignModelError(f"tekken: vocab entry {i} must be {{\"rank\": {i}, \"token_bytes\": BASE64, ...}}, "
                                    f"not {short(entry)}")
        try:
            data = base64.b64decode(entry["token_bytes"])
        except (ValueError, binascii.Error):
            raise ForeignModelError(f"tekken: vocab entry {i}: {short(entry['token_bytes'])} is not base64") from None
        if i < 256 and data != bytes([i]):
            raise ForeignModelError(f"tekken: vocab entry {i} is {data!r}; the first 256 are the single bytes in order")
        if data in ranks:
            raise ForeignModelError(f"tekken: vocab entries {ranks[data] - n_special} and {i} are both {data!r}")
        check_token_length(i, len(data), max_token_bytes)
        ranks[data] = i + n_special
    roles = Roles.of({role: t for role, t in _ROLE_TOKENS.items() if t in specials})
    return ranks_model(ranks, digest, from_pattern(pattern), specials, "tekken", roles)


def _specials(doc: dict, version, n_special: int) -> dict[str, int]:
    listed = doc.get("special_tokens")
    if listed is None:
        if version not in VERSIONS:
            raise ForeignModelError(f"tekken: unknown version {short(version)} (mistral-common knows {', '.join(VERSIONS)})")
        if VERSIONS.index(version) > VERSIONS.index("v7"):
            raise ForeignModelError(f"tekken: a {version} file must list its special_tokens")
        listed = [{"rank": i, "token_str": t} for i, t in enumerate(DEPRECATED_SPECIALS)]
    if not isinstance(listed, list) or len(listed) > n_special:
        raise ForeignModelError(f"tekken: 'special_tokens' must be a list of at most default_num_special_tokens "
                                f"({n_special}) entries, not {describe_json(listed)}")
    found: dict[str, int] = {}
    for k, t in enumerate(listed):
        if not (isinstance(t, dict) and is_text(t.get("token_str")) and t["token_str"] and is_count(t.get("rank"))):
            raise ForeignModelError(f"tekken: special token {k} must have a 'rank' and a non-empty 'token_str'")
        found[t["token_str"]] = t["rank"]
    for i in range(len(listed), n_special):
        found.setdefault(FILLER.format(id=i), i)
    if len(found) != n_special or sorted(found.values()) != list(range(n_special)):
        raise ForeignModelError(f"tekken: the special tokens must be {n_special} distinct strings with the ids "
                                f"0..{n_special - 1} (default_num_special_tokens), as mistral-common requires")
    return found
