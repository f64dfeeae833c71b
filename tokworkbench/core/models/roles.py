"""Special-token roles and document encoding, for every model kind.

A role says what a special token is *for*: `bos` opens a document, `eos` closes it, `pad` fills
a short row of a batch, `unk` stands for text the vocabulary cannot spell. Each is optional;
other special tokens may have no role at all.

Everything here is a function over the `Model` protocol (encode_ordinary, decode, special_ids,
roles), not BPE code, so a new model kind gets document encoding by having `roles`.

- `encode_content` never adds a special id (a special token's string in the text is plain text).
- `encode_document` is BOS + content + EOS, exactly one of each: a text that already starts
  with the BOS string (or ends with the EOS string) carries that boundary, and it is not added
  again; neither is an id boundary that allowed special tokens put at either end.
- `decode(..., skip_special=True)` hides BOS, EOS and PAD but shows UNK (it stands for text
  that was there) and specials without a role. Every id is checked first, so an id outside
  the vocabulary is an error naming it and the valid range, skipped or not.
"""

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, fields, replace

from tokworkbench.core.errors import RoleError, SpecialTokenInTextError

ROLES = ("bos", "eos", "pad", "unk")


@dataclass(frozen=True)
class Roles:
    bos: str | None = None
    eos: str | None = None
    pad: str | None = None
    unk: str | None = None

    def __post_init__(self):
        seen: dict[str, str] = {}
        for role, token in self.items():
            if not isinstance(token, str) or not token:
                raise RoleError(f"the {role} token must be a non-empty string, not {token!r}")
            if token in seen:
                raise RoleError(f"{token!r} cannot be both {seen[token]} and {role}: give each role its own token")
            seen[token] = role

    @classmethod
    def of(cls, mapping: "dict[str, str | None] | Roles | None") -> "Roles":
        """Roles from a {role: token} mapping (a model file's, the settings'); unknown roles are
        an error naming them."""
        if mapping is None:
            return cls()
        if isinstance(mapping, Roles):
            return mapping
        if not isinstance(mapping, dict):
            raise RoleError(f"roles must map {', '.join(ROLES)} to tokens, not {type(mapping).__name__}")
        unknown = sorted(str(k) for k in mapping if k not in ROLES)
        if unknown:
            raise RoleError(f"unknown role {', '.join(unknown)}; the roles are {', '.join(ROLES)}")
        return cls(**{k: v for k, v in mapping.items() if v is not None})

    def items(self) -> list[tuple[str, str]]:
        """(role, token) for each role that is set, in the order bos, eos, pad, unk."""
        return [(f.name, getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None]

    def to_dict(self) -> dict[str, str]:
        """Only the roles that are set (what a model file records)."""
        return dict(self.items())

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.items())

    def role_of(self, token: str) -> str | None:
        return next((r for r, t in self.items() if t == token), None)

    def check(self, vocabulary: Collection[str], what: str = "a special token of this model") -> "Roles":
        """Every role names a token of `vocabulary` (a model's special tokens, or a fixed
        vocabulary's tokens); a clear error naming the first that does not."""
        for role, token in self.items():
            if token not in vocabulary:
                shown = ", ".join(repr(t) for t in list(vocabulary)[:8]) or "none"
                more = ", …" if len(vocabulary) > 8 else ""
                raise RoleError(f"the {role} token {token!r} is not {what} (they are: {shown}{more})")
        return self

    def __bool__(self) -> bool:
        return bool(self.items())


NO_ROLES = Roles()


def roles_of(model) -> Roles:
    """A model's roles (every model has them: `Model.roles`, NO_ROLES when it gives none)."""
    return model.roles


def with_roles(model, roles: "Roles | dict | None"):
    """The same model with these roles (checked against it), or with its own when none are
    given (em's spm_train layout names <s> and </s>, as its .model does); models are frozen
    dataclasses."""
    roles = Roles.of(roles)
    return model if not roles.tokens or roles == roles_of(model) else replace(model, roles=roles)


def role_id(model, role: str) -> int | None:
    """The id of the token with `role`, or None when the model gives no token that role."""
    token = getattr(roles_of(model), role)
    return None if token is None else model.special_ids[token]


def role_ids(model) -> dict[str, int]:
    """{role: id} for each role the model has."""
    specials = model.special_ids
    return {role: specials[token] for role, token in roles_of(model).items()}


def encode_content(model, text: str) -> list[int]:
    """The ids of `text` alone: never a special id (UNK aside, which stands for content)."""
    return model.encode_ordinary(text)


def encode_document(model, text: str, allowed_special: Collection[str] | str = (),
                    strict: bool = False) -> list[int]:
    """BOS + content + EOS, each boundary exactly once (see the module docstring). A role the
    model lacks is simply not added. `allowed_special` lets special strings inside the text
    become their ids, as `Model.encode` does; `strict` makes any other special string inside
    the text an error, as `Model.encode` does (the command line's rule), instead of plain text."""
    roles = roles_of(model)
    skipped = 0  # the leading BOS taken off: an error's offset counts it back in
    if roles.bos is not None and text.startswith(roles.bos):
        text, skipped = text[len(roles.bos):], len(roles.bos)
    if roles.eos is not None and text.endswith(roles.eos):
        text = text[: len(text) - len(roles.eos)]
    if allowed_special or strict:
        try:
            ids = model.encode(text, allowed_special=allowed_special)
        except SpecialTokenInTextError as exc:
            raise exc.shifted(skipped) from None
    else:
        ids = encode_content(model, text)
    return with_boundaries(model, ids)


def with_boundaries(model, ids: Sequence[int]) -> list[int]:
    """`ids` with BOS in front and EOS behind, unless they already begin or end with them."""
    bos, eos = role_id(model, "bos"), role_id(model, "eos")
    out = list(ids)
    if bos is not None and out[:1] != [bos]:
        out.insert(0, bos)
    if eos is not None and out[-1:] != [eos]:
        out.append(eos)
    return out


def hidden_ids(model) -> frozenset[int]:
    """What `skip_special` hides: the ids of BOS, EOS and PAD."""
    ids = role_ids(model)
    return frozenset(ids[r] for r in ("bos", "eos", "pad") if r in ids)


def decode(model, ids: Iterable[int], skip_special: bool = False, errors: str = "strict") -> str:
    """Text of `ids`; with `skip_special`, BOS, EOS and PAD are left out and UNK is kept.
    An id outside the vocabulary is a DecodeError naming it and the valid range."""
    ids = list(ids)
    if not skip_special:
        return model.decode(ids, errors=errors)
    hide = hidden_ids(model)
    kept = [i for i in ids if i not in hide]
    if len(kept) != len(ids):
        model.decode_bytes(ids)  # every id checked where it stands, so the error names its position
    return model.decode(kept, errors=errors)
