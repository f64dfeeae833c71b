"""spmlattice.py, spmpieces.py, spmwalk.py and hashing.py's grouping compiled with numba: the same
functions, the same bits, about a hundred times faster. Imported only once jit.available() says
so (core/jit.py); the modules themselves are the path where numba is missing (the seed's grouping:
hashing.first_and_inverse), and the tests hold the two equal.

Each function is rebuilt over one namespace in which every name of those modules is the compiled
function, so a compiled function calls compiled ones."""

import types

import numba

from tokworkbench.core.unigram import hashing, spmlattice, spmpieces, spmwalk

_NAMES = ("log_sum_exp", "string_edges", "_longest", "_room", "e_thread", "best_thread", "e_step", "best_paths",
          "_by_end", "_viterbi", "_viterbi_arrays", "alternatives", "unreachable", "_two_best", "_push", "_sift_up",
          "_pop", "losses", "walk", "_table", "_slot", "_grown", "group_hashes", "_rehashed")
_SOURCES = (spmlattice, spmpieces, spmwalk, hashing)
_namespace = {k: v for module in _SOURCES for k, v in vars(module).items()}
for _name in _NAMES:
    _function = _namespace[_name]
    _rebuilt = types.FunctionType(_function.__code__, _namespace, _name, _function.__defaults__)
    _namespace[_name] = numba.njit(cache=True, nogil=True)(_rebuilt)

compiled = True
e_thread = _namespace["e_thread"]
best_thread = _namespace["best_thread"]
e_step = _namespace["e_step"]
best_paths = _namespace["best_paths"]
alternatives = _namespace["alternatives"]
unreachable = _namespace["unreachable"]
losses = _namespace["losses"]
walk = _namespace["walk"]
group_hashes = _namespace["group_hashes"]
