"""What the views show: token spans in text, UTF-8 byte rows, round trips, and one escaping rule."""
