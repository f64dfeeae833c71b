"""A score as HF's `tokenizers` holds it: the JSON number read by serde_json's default parser.

That parser (serde_json without `float_roundtrip`, as `tokenizers` builds it) is not correctly
rounded: it gathers the digits into a u64, converts that to f64 and multiplies or divides by a
power of ten, two roundings. `-9.110809326171875`, exactly a float, becomes
-9.110809326171877. HF's Viterbi then sums those values, so where two segmentations tie, the
ulp decides as it does in HF. A score's decimal is taken as Python writes it (the shortest that
reads back), which is what HF (ryu) and json.dumps write.
"""

import math
import re

_NUMBER = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")
_POW10 = [float(f"1e{k}") for k in range(309)]


def hf_score(value: float) -> float:
    """`value` as serde_json reads the shortest decimal that names it."""
    if not math.isfinite(value) or value == int(value) and abs(value) < 2**53:
        return value  # an integer converts exactly, whichever way it is written
    m = _NUMBER.fullmatch(repr(value))
    if m is None:
        return value
    sign, whole, frac, exp = m.groups()
    frac = frac or ""
    significand = int(whole + frac)  # at most 17 significant digits: serde's u64 never overflows
    exponent = int(exp or 0) - len(frac)
    f = float(significand)
    while True:
        if abs(exponent) < len(_POW10):
            f = f * _POW10[exponent] if exponent >= 0 else f / _POW10[-exponent]
            break
        if f == 0.0:
            break
        f /= 1e308
        exponent += 308
    return -f if sign else f
