"""Engines that run the core's work somewhere else (a Dask cluster). They import their
framework at the top; the core never imports them, and the CLI only when one is asked for."""
