"""The main screen's dialog flows, each a small class composed by MainScreen (not inherited):
each asks in a dialog, then calls one session verb, asking again before anything would be
overwritten or discarded. What a flow needs of the screen is in its constructor."""
