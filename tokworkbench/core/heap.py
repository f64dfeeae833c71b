"""Keep a session's long-lived objects out of the cyclic collector's walks.

A session's tables are millions of long-lived objects that the cyclic collector would walk on
every full collection: 120-155 ms each in the app with a 10 MB corpus, 19 in 12 s of a run,
each a pause that keys waited behind. `settle` takes them out of its reach.
"""

import gc


def settle(drop_old: bool = False) -> None:
    """Every object alive now leaves the cyclic collector's walks (reference counting still
    frees them). `drop_old`: first collect what an earlier `settle` had set aside, for when the
    state it held (a replaced session) may have become garbage with cycles."""
    if drop_old:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
