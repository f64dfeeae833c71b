"""A corpus file in UTF-16 or UTF-32 holds NUL bytes: it was called a binary file. It is named
for what it is, with the way to convert it; inside a folder it is still passed over."""

import pytest

from tokworkbench.core.errors import BinaryFileError
from tokworkbench.core.text.blocks import count_files
from tokworkbench.core.text.corpus import Skipped, iter_documents
from tokworkbench.core.text.pretokenize import pre_tokenizer

TEXT = "hello world, a corpus in another encoding\n" * 3


@pytest.mark.parametrize(("codec", "named", "iconv"), [
    ("utf-16", "UTF-16LE", "-f UTF-16 "), ("utf-16-le", "UTF-16LE", "-f UTF-16LE "),
    ("utf-16-be", "UTF-16BE", "-f UTF-16BE "), ("utf-32", "UTF-32LE", "-f UTF-32 "),
])
def test_a_wide_text_file_is_named_with_the_way_to_convert_it(tmp_path, codec, named, iconv):
    path = tmp_path / "c.txt"
    path.write_bytes(TEXT.encode(codec))
    for read in (lambda: list(iter_documents([path])), lambda: count_files([path], "none", pre_tokenizer("gpt4"))):
        with pytest.raises(BinaryFileError, match=f"looks like {named} text, not UTF-8") as caught:
            read()
        assert iconv in str(caught.value)


def test_binary_is_still_binary_and_a_folder_passes_both_over(tmp_path):
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02 binary")
    with pytest.raises(BinaryFileError, match="looks like a binary file"):
        list(iter_documents([tmp_path / "b.bin"]))
    (tmp_path / "w.txt").write_bytes(TEXT.encode("utf-16"))
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    report, skipped = Skipped(), []
    docs = list(iter_documents([tmp_path], skipped=skipped, report=report))
    assert [d.text for d in docs] == [TEXT] and sorted(map(lambda p: p.rsplit("/", 1)[-1], skipped)) == ["b.bin", "w.txt"]
