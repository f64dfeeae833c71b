"""The derived cache (core/files/derivedcache.py): a ranks file's recovered merges kept between
runs. A cached load must equal a fresh one, and a cache that is damaged, stale or another file's
must be ignored and rebuilt, never trusted."""

import base64
import os

import pytest

from tokworkbench.core import TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ForeignModelError, ModelFileError, TokenLimitError
from tokworkbench.core.files import derivedcache
from tokworkbench.core.formats import tiktoken
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks
from tokworkbench.core.registry.load import load_any


@pytest.fixture(autouse=True)
def cache_here(tmp_path, monkeypatch):
    """Every ranks file is big enough to cache, and the cache is this test's own."""
    monkeypatch.setattr(tiktoken, "CACHE_FROM_BYTES", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def ranks() -> dict[bytes, int]:
    """A small model of ours as ranks, single bytes in GPT-2's order (not byte order)."""
    texts = [d.text for d in load_corpus(sample_paths()).documents]
    t = Trainer(texts, TrainConfig(units="byte", normalizer="none", pre_tokenizer=pre_tokenizer("gpt4"),
                                   tie_break="first"))
    list(t.run(vocab_size=700))
    tokens = list(t.model().ranked_tokens)
    singles = [bytes([b]) for b in bytes_to_unicode()]
    return {tok: r for r, tok in enumerate(singles + tokens[256:])}


def _file(ranks: dict[bytes, int]) -> bytes:
    return "".join(f"{base64.b64encode(t).decode()} {r}\n"
                   for t, r in sorted(ranks.items(), key=lambda x: x[1])).encode()


TEXTS = ["Hello world, it's 2026!  \n\tdef f(x): return x**2", "안녕하세요 👋 naïve café 12345", ""]


def _same(a, b) -> None:
    assert a.merges == b.merges
    assert a.to_outside(list(range(a.vocab_size))) == b.to_outside(list(range(b.vocab_size)))
    assert a.special_ids == b.special_ids
    for text in TEXTS:
        assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all")


def _load(raw: bytes, **kw):
    return tiktoken.cached_ranks_tokenizer(raw, pre_tokenizer("gpt4"), {"<|endoftext|>": 5000}, **kw)


def test_a_cached_load_equals_a_fresh_one(ranks):
    raw = _file(ranks)
    digest = tiktoken.ranks_digest(raw)
    fresh = tiktoken.ranks_tokenizer(tiktoken.parse_ranks(raw), pre_tokenizer("gpt4"), {"<|endoftext|>": 5000})
    first = _load(raw)
    assert derivedcache.cache_path(digest).is_file()
    kept = derivedcache.load(digest)
    assert kept is not None and kept.merges == list(fresh.merges)
    second = _load(raw)
    _same(first, fresh)
    _same(second, fresh)


def test_the_cache_is_used_when_it_checks_out(ranks, monkeypatch):
    raw = _file(ranks)
    _load(raw)

    def never(*args):
        raise AssertionError("merges recovered again")

    monkeypatch.setattr(tiktoken, "merges_from_ranks", never)  # the ranks are still read, to check the cache
    _load(raw)


def _damaged(data: bytes) -> list[bytes]:
    body = data.index(b"\n", len(derivedcache.MAGIC)) + 1
    flipped = bytearray(data)
    flipped[body + 5] ^= 1
    return [b"", data[:len(data) // 2], b"x" + data[1:], bytes(flipped), data + b"\0",
            data.replace(b'"merges": ', b'"merges": 1')]


@pytest.mark.parametrize("case", range(6))
def test_a_damaged_cache_is_ignored_and_rebuilt(ranks, case):
    raw = _file(ranks)
    fresh = _load(raw)
    path = derivedcache.cache_path(tiktoken.ranks_digest(raw))
    good = path.read_bytes()
    path.write_bytes(_damaged(good)[case])
    assert derivedcache.load(tiktoken.ranks_digest(raw)) is None
    _same(_load(raw), fresh)
    assert path.read_bytes() == good  # rewritten


def test_a_cache_of_other_ranks_is_not_trusted(ranks):
    """Another file's cache, under this file's name (copied by hand, or a stale name): its
    recorded digest differs, so it is ignored; so is one whose merges are valid bytes of a
    payload that lies (a merge joining a later token), even with its checksum made right."""
    raw = _file(ranks)
    other = dict(ranks)
    top = max(other.values())
    other[b"ab"] = top + 1  # one more merge
    _load(_file(other))
    digest = tiktoken.ranks_digest(raw)
    derivedcache.cache_path(digest).write_bytes(
        derivedcache.cache_path(tiktoken.ranks_digest(_file(other))).read_bytes())
    assert derivedcache.load(digest) is None
    fresh = tiktoken.ranks_tokenizer(tiktoken.parse_ranks(raw), pre_tokenizer("gpt4"), {"<|endoftext|>": 5000})
    _same(_load(raw), fresh)
    # a well-formed cache whose merge joins a token made after it
    bad = derivedcache.DerivedMerges([(300, 1)] + list(fresh.merges)[1:], fresh.to_outside(
        list(range(256 + len(fresh.merges)))), 10)
    assert derivedcache.store(digest, bad)
    assert derivedcache.load(digest) is None
    same_rank = derivedcache.DerivedMerges(list(fresh.merges), [0] * (256 + len(fresh.merges)), 10)
    assert derivedcache.store(digest, same_rank)
    assert derivedcache.load(digest) is None


def test_errors_are_the_same_with_a_cache(ranks):
    """A special token on a taken rank, and a token over --max-token-bytes, fail as a fresh
    load fails, whether or not the merges were cached."""
    raw = _file(ranks)
    _load(raw)
    with pytest.raises(ForeignModelError, match=r"special token 'x' has id 0, which is the rank of b'!'"):
        tiktoken.cached_ranks_tokenizer(raw, pre_tokenizer("gpt4"), {"x": 0})
    longest = max(map(len, ranks))
    with pytest.raises(TokenLimitError):
        _load(raw, max_token_bytes=longest - 1)


def test_a_tiktoken_file_is_cached_and_loads_the_same(tmp_path, ranks):
    path = tmp_path / "r.tiktoken"
    path.write_bytes(_file(ranks))
    first = load_any(path, "gpt4")
    assert derivedcache.cache_path(tiktoken.ranks_digest(path.read_bytes())).is_file()
    _same(load_any(path, "gpt4"), first)


def test_an_unwritable_cache_is_skipped(ranks, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    raw = _file(ranks)
    _same(_load(raw), tiktoken.ranks_tokenizer(tiktoken.parse_ranks(raw), pre_tokenizer("gpt4"),
                                               {"<|endoftext|>": 5000}))


def test_tests_never_write_the_real_home_cache():
    assert not os.environ["XDG_CACHE_HOME"].startswith(os.path.expanduser("~/.cache"))


@pytest.mark.parametrize("name", ["cl100k_base"])
def test_a_preset_from_the_cache_equals_a_fresh_one(name, monkeypatch):
    try:
        preset_ranks(PRESETS[name])
    except ModelFileError as exc:
        pytest.skip(f"no {name} data here ({exc}); pip install 'tokworkbench[openai-data]' runs this test")
    first = load_preset(name)
    assert derivedcache.cache_path(PRESETS[name].sha256).is_file()
    again = load_preset(name)
    _same(again, first)


@pytest.mark.parametrize("header", [b"[" * 2000 + b"]" * 2000, b'{"merges": 1e999, "longest": 1}',
                                    b'{"merges": 1, "longest": 1e999}'], ids=["deep", "merges", "longest"])
def test_a_cache_header_that_json_cannot_hold_is_ignored(ranks, header):
    """A damaged header that json reads too deep, or with a number int() cannot take, is a
    damaged cache like any other: ignored and rebuilt, never an exception that stops the load."""
    raw = _file(ranks)
    fresh = _load(raw)
    path = derivedcache.cache_path(tiktoken.ranks_digest(raw))
    good = path.read_bytes()
    path.write_bytes(derivedcache.MAGIC + header + b"\n")
    assert derivedcache.load(tiktoken.ranks_digest(raw)) is None
    _same(_load(raw), fresh)
    assert path.read_bytes() == good


def test_a_cache_with_a_huge_rank_is_checked_without_a_huge_table(ranks, monkeypatch):
    """Ranks are checked distinct by sorting, not by a table as long as the largest rank (one
    of 2**31 would be a 16 GB bincount)."""
    raw = _file(ranks)
    fresh = _load(raw)
    digest = tiktoken.ranks_digest(raw)
    outside = fresh.to_outside(list(range(256 + len(fresh.merges))))
    outside[-1] = 1 << 31
    assert derivedcache.store(digest, derivedcache.DerivedMerges(list(fresh.merges), outside, 10))
    monkeypatch.setattr(derivedcache.np, "bincount", None)  # a table would fail loudly here
    kept = derivedcache.load(digest)
    assert kept is not None and kept.outside[-1] == 1 << 31


# The cache where another user could reach it (issue 28, item 2).

def _fresh(raw: bytes):
    return tiktoken.ranks_tokenizer(tiktoken.parse_ranks(raw), pre_tokenizer("gpt4"), {"<|endoftext|>": 5000})


def _forgeries(fresh) -> dict[str, derivedcache.DerivedMerges]:
    """Caches that pass every check of the file alone (their own digest, counts, merges of
    earlier tokens, distinct ranks) yet describe another model: two tokens' ids swapped, or two
    merges swapped so that an id stands for other bytes."""
    merges = list(fresh.merges)
    outside = fresh.to_outside(list(range(256 + len(merges))))
    swapped_ids = list(outside)
    swapped_ids[300], swapped_ids[301] = swapped_ids[301], swapped_ids[300]
    k = next(k for k in range(len(merges) - 1) if max(merges[k + 1]) < 256 + k and merges[k] != merges[k + 1])
    swapped_merges = list(merges)
    swapped_merges[k], swapped_merges[k + 1] = merges[k + 1], merges[k]
    return {"ids": derivedcache.DerivedMerges(merges, swapped_ids, 10),
            "bytes": derivedcache.DerivedMerges(swapped_merges, outside, 10)}


@pytest.mark.parametrize("kind", ["ids", "bytes"])
def test_a_forged_self_consistent_cache_is_checked_against_the_ranks_and_rebuilt(ranks, kind):
    raw = _file(ranks)
    digest = tiktoken.ranks_digest(raw)
    fresh = _fresh(raw)
    forged = _forgeries(fresh)[kind]
    assert derivedcache.store(digest, forged)
    assert derivedcache.load(digest) == forged  # the file alone cannot tell
    _same(_load(raw), fresh)
    assert derivedcache.load(digest).outside == fresh.to_outside(list(range(256 + len(fresh.merges))))
    assert not derivedcache.matches(forged, tiktoken.parse_ranks(raw))


def test_a_forged_cl100k_cache_cannot_swap_hello_and_world():
    """The issue's case: a cache that gives 'hello' the id of ' world' and back."""
    try:
        preset_ranks(PRESETS["cl100k_base"])
    except ModelFileError as exc:
        pytest.skip(f"no cl100k_base data here ({exc})")
    fresh = load_preset("cl100k_base")
    assert fresh.encode("hello world") == [15339, 1917]
    digest = PRESETS["cl100k_base"].sha256
    kept = derivedcache.load(digest)
    outside = list(kept.outside)
    a, b = outside.index(15339), outside.index(1917)
    outside[a], outside[b] = outside[b], outside[a]
    assert derivedcache.store(digest, derivedcache.DerivedMerges(kept.merges, outside, kept.longest))
    assert load_preset("cl100k_base").encode("hello world") == [15339, 1917]


def test_a_link_planted_at_the_cache_file_is_replaced_not_written_through(ranks, tmp_path):
    raw = _file(ranks)
    path = derivedcache.cache_path(tiktoken.ranks_digest(raw))
    path.parent.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("the victim's own file")
    victim.chmod(0o600)
    path.symlink_to(victim)
    _same(_load(raw), _fresh(raw))
    assert victim.read_text() == "the victim's own file" and oct(victim.stat().st_mode & 0o777) == "0o600"
    assert not path.is_symlink() and path.is_file()


def test_a_link_to_a_good_cache_is_not_followed(ranks, tmp_path):
    raw = _file(ranks)
    digest = tiktoken.ranks_digest(raw)
    _load(raw)
    path = derivedcache.cache_path(digest)
    elsewhere = tmp_path / "elsewhere.bin"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    assert derivedcache.load(digest) is None


def test_the_cache_is_private_whatever_the_ranks_files_mode(ranks, tmp_path):
    """The folders made are 0700 and a cache file 0600, so a private ranks file's merges are
    not readable by others (they were written 0644); an older 0755 folder is tightened."""
    raw = _file(ranks)
    _load(raw)
    folder = derivedcache.cache_dir()
    assert folder.stat().st_mode & 0o777 == 0o700
    assert folder.parent.stat().st_mode & 0o777 == 0o700
    assert derivedcache.cache_path(tiktoken.ranks_digest(raw)).stat().st_mode & 0o777 == 0o600
    folder.chmod(0o755)
    other = dict(ranks)
    other[b"ab"] = max(other.values()) + 1
    _load(_file(other))
    assert folder.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("shared", ["derived", "tokworkbench"])
def test_a_folder_others_can_write_or_a_linked_folder_means_no_cache(ranks, tmp_path, shared):
    raw = _file(ranks)
    digest = tiktoken.ranks_digest(raw)
    _load(raw)
    folder = derivedcache.cache_dir() if shared == "derived" else derivedcache.cache_dir().parent
    folder.chmod(0o777)
    try:
        assert derivedcache.load(digest) is None  # a file there could be anyone's
        assert not derivedcache.store(digest, derivedcache.DerivedMerges([], list(range(256)), 1))
        _same(_load(raw), _fresh(raw))
    finally:
        folder.chmod(0o700)


def test_a_linked_cache_folder_means_no_cache(ranks, tmp_path):
    raw = _file(ranks)
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    derivedcache.cache_dir().parent.mkdir(parents=True)
    derivedcache.cache_dir().symlink_to(real)
    _same(_load(raw), _fresh(raw))
    assert list(real.iterdir()) == []


# -- the folder stays bounded ---------------------------------------------------------------------

def _kept(name: str, size: int = 100, used: int | None = None, siblings: str | None = None) -> None:
    """Keep `size` bytes as `name`, last used at second `used` (1970 and on: before any write now)."""
    assert derivedcache.keep(name, b"x" * size, siblings)
    if used is not None:
        os.utime(derivedcache.cache_dir() / name, (used, used))


def _names() -> set[str]:
    return {p.name for p in derivedcache.cache_dir().iterdir()}


def test_of_the_versions_of_one_thing_only_the_last_used_few_stay():
    _kept("merges-a.bin", used=1)
    for i in range(5):
        _kept(f"unicode-classes-{i}.bin", used=10 + i, siblings="unicode-classes-")
    assert _names() == {"merges-a.bin"} | {f"unicode-classes-{i}.bin" for i in (2, 3, 4)}
    assert derivedcache.SIBLINGS_KEPT == 3


def test_a_kept_file_read_counts_as_used_and_outlives_one_written_later():
    for i, name in enumerate("abc"):
        _kept(f"unicode-classes-{name}.bin", used=10 + i, siblings="unicode-classes-")
    assert derivedcache.read_kept("unicode-classes-a.bin") == b"x" * 100
    _kept("unicode-classes-d.bin", siblings="unicode-classes-")
    assert _names() == {"unicode-classes-a.bin", "unicode-classes-c.bin", "unicode-classes-d.bin"}


def test_past_its_size_the_folder_loses_its_least_recently_used_files(monkeypatch):
    monkeypatch.setattr(derivedcache, "MAX_KEPT_BYTES", 2500)
    for i in range(3):
        _kept(f"merges-{i}.bin", 1000, used=10 + i)
    assert _names() == {"merges-1.bin", "merges-2.bin"}  # 3000 bytes would not fit
    derivedcache.read_kept("merges-1.bin")
    _kept("merges-3.bin", 1000)
    assert _names() == {"merges-1.bin", "merges-3.bin"}
    _kept("merges-big.bin", 5000)  # the file just written stays, alone
    assert _names() == {"merges-big.bin"}


def test_pruning_leaves_links_folders_temps_and_other_files_alone(monkeypatch, tmp_path):
    monkeypatch.setattr(derivedcache, "MAX_KEPT_BYTES", 0)
    _kept("merges-a.bin")
    folder = derivedcache.cache_dir()
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"someone else's")
    (folder / "merges-link.bin").symlink_to(outside)
    (folder / "merges-dir.bin").mkdir()
    (folder / "notes.txt").write_text("a note")
    (folder / ".merges-b.bin.tokworkbench-tmp-elsewhere-1-ab").write_bytes(b"another host's write")
    _kept("merges-b.bin")
    assert _names() == {"merges-b.bin", "merges-link.bin", "merges-dir.bin", "notes.txt",
                        ".merges-b.bin.tokworkbench-tmp-elsewhere-1-ab"}
    assert outside.read_bytes() == b"someone else's"


@pytest.mark.parametrize("name", ["../merges-a.bin", ".merges-a.bin", "merges-a", "a/b.bin", ""])
def test_only_a_kept_files_name_is_written(name):
    with pytest.raises(ValueError):
        derivedcache.keep(name, b"x")


def test_where_the_safe_calls_are_missing_nothing_is_kept_and_loads_still_work(ranks, monkeypatch):
    """As on Windows: no O_DIRECTORY, no dir_fd. The cache is skipped, not used unsafely."""
    monkeypatch.delattr(os, "O_DIRECTORY")
    raw = _file(ranks)
    _same(_load(raw), _fresh(raw))
    assert not derivedcache.cache_dir().exists()
    assert derivedcache.read_kept("merges-a.bin") is None
