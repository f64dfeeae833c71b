"""How token bytes are written for people: one escaping rule for every view and command."""


def render_bytes(data: bytes) -> str:
    """Token bytes as text; bytes that are not valid UTF-8 here appear as \\xNN escapes."""
    return data.decode("utf-8", errors="backslashreplace")


def hex_bytes(data: bytes) -> str:
    return " ".join(f"{b:02X}" for b in data)
