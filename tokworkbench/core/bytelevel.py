"""GPT-2's byte alphabet: how byte-level vocabularies (HF, GPT-2) write bytes as characters."""


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (used by HF byte-level BPE)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


def hf_byte_ranks() -> list[int]:
    """For each byte, its id in a Hugging Face byte-level vocabulary trained from scratch:
    the 256 GPT-2 characters sorted by code point."""
    mapping = bytes_to_unicode()
    order = sorted(range(256), key=lambda b: mapping[b])
    ranks = [0] * 256
    for rank, b in enumerate(order):
        ranks[b] = rank
    return ranks
