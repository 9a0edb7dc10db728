"""The 8-bit float formats, from their definitions (OCP FP8 and MX specs),
with PyTorch's conversion rules, in the standard library only (fractions for
exact arithmetic). It shares nothing with aoa's C++ conversions: every
encoding is decoded to an exact rational by the format's definition, and a
value is rounded by comparing it with the representable values.

Formats (docs/language.md, "Casts"):

  float8_e4m3fn   sign, 4 exponent bits (bias 7), 3 mantissa bits; no
                  infinities; S.1111.111 is NaN; largest finite 448.
  float8_e5m2     sign, 5 exponent bits (bias 15), 2 mantissa bits; IEEE
                  754-like: exponent 11111 is Inf (mantissa 0) or NaN.
  float8_e8m0fnu  8 exponent bits: 2^(e - 127); no sign, no zero; 0xFF NaN.

Conversions to them, as PyTorch's `.to(dtype)`:

  - the source becomes a float32 first (bfloat16, float16 and the FP8
    formats exactly; a float64 or an integer rounded to nearest even);
  - e4m3fn and e5m2: round to nearest, ties to even, the exponent range
    unbounded above; a result past the largest finite is NaN for e4m3fn
    (no infinities; PyTorch does not saturate) and Inf for e5m2; +-Inf is
    NaN for e4m3fn; NaN is 0x7F or 0xFF (the input's sign); zero and
    results that round to zero keep the sign;
  - e8m0fnu (PyTorch's fp8e8m0fnu_from_fp32_value, stated on values): the
    sign is dropped; NaN and +-Inf give 0xFF; a normal float x with
    2^k <= |x| < 2^(k+1) gives 2^(k+1) when |x| >= 1.5 * 2^k, else 2^k
    (2^128 is NaN); below 2^-126, |x| <= 2^-127 gives 2^-127 (0x00) and
    larger ones 2^-126.

Conversions from them to bfloat16, float16, float32 and float64 are exact; a
NaN becomes the quiet NaN of the same sign whose mantissa starts with the
FP8 NaN's mantissa bits (aoa's rule for every NaN, "payload kept"): e4m3fn
0x7F gives float32 0x7FF00000 as PyTorch does.

Values are bit patterns (ints).
"""
import bisect
import math
import struct
from fractions import Fraction

FP8 = ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu")
# (exponent bits, mantissa bits) of the IEEE formats.
IEEE = {"float64": (11, 52), "float32": (8, 23), "float16": (5, 10), "bfloat16": (8, 7)}
_SIGNED = {"float8_e4m3fn": (4, 3, 7), "float8_e5m2": (5, 2, 15)}


def decode(dtype, bits):
    """An FP8 or IEEE encoding -> a Fraction (zero is Fraction(0); use
    is_negative for its sign), or ('nan', sign) / ('inf', sign)."""
    if dtype == "float8_e8m0fnu":
        if bits == 0xFF:
            return ("nan", 0)
        return Fraction(2) ** (bits - 127)
    if dtype in _SIGNED:
        e, m, bias = _SIGNED[dtype]
    else:
        e, m = IEEE[dtype]
        bias = (1 << (e - 1)) - 1
    sign = bits >> (e + m)
    field = (bits >> m) & ((1 << e) - 1)
    mant = bits & ((1 << m) - 1)
    if dtype == "float8_e4m3fn":
        if field == 15 and mant == 7:
            return ("nan", sign)
    elif field == (1 << e) - 1:
        return ("nan" if mant else "inf", sign)
    if field == 0:
        value = Fraction(mant) * Fraction(2) ** (1 - bias - m)
    else:
        value = Fraction((1 << m) + mant) * Fraction(2) ** (field - bias - m)
    return -value if sign else value


def is_negative(dtype, bits):
    if dtype == "float8_e8m0fnu":
        return False
    width = 8 if dtype in _SIGNED else 1 + sum(IEEE[dtype])
    return bits >> (width - 1) == 1


def _finite_table(dtype):
    """Non-negative finite value -> encoding, for e4m3fn and e5m2."""
    table = {}
    for bits in range(0x80):
        v = decode(dtype, bits)
        if not isinstance(v, tuple):
            table[v] = bits
    return table


_TABLES = {d: _finite_table(d) for d in _SIGNED}
_SORTED = {d: sorted(_TABLES[d]) for d in _SIGNED}


def _round_signed_fp8(dtype, sign, a):
    """|x| = a (a Fraction >= 0) with sign `sign` -> e4m3fn or e5m2 bits."""
    values = _SORTED[dtype]
    table = _TABLES[dtype]
    # The value past the largest finite if the exponent went on (the
    # largest's step added once: 480 for e4m3fn, 65536 for e5m2), whose
    # would-be encoding is the largest's plus one.
    beyond = values[-1] + (values[-1] - values[-2])
    if a >= beyond:
        pick = beyond
    else:
        i = bisect.bisect_right(values, a)
        lo = values[i - 1]
        if lo == a:
            return (sign << 7) | table[lo]
        hi = values[i] if i < len(values) else beyond
        lo_even = table[lo] % 2 == 0
        if a - lo < hi - a or (a - lo == hi - a and lo_even):
            pick = lo
        else:
            pick = hi
    if pick != beyond:
        return (sign << 7) | table[pick]
    if dtype == "float8_e4m3fn":
        return (sign << 7) | 0x7F  # NaN
    return (sign << 7) | 0x7C  # Inf


def encode_ieee(dtype, value, negative):
    """The IEEE `dtype` bits of the exact value `value` (a Fraction) rounded
    to nearest even, overflow to Inf; `negative` gives the sign of zero."""
    e, m = IEEE[dtype]
    bias = (1 << (e - 1)) - 1
    sign = 1 if negative else 0
    a = abs(value)
    if a == 0:
        return sign << (e + m)
    E = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** E > a:
        E -= 1
    while Fraction(2) ** (E + 1) <= a:
        E += 1
    E = max(E, 1 - bias)
    scaled = a / Fraction(2) ** (E - m)
    n = math.floor(scaled)
    rest = scaled - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n == 1 << (m + 1):
        n >>= 1
        E += 1
    if E > bias:
        return (sign << (e + m)) | (((1 << e) - 1) << m)
    if n < (1 << m):
        return (sign << (e + m)) | n
    return (sign << (e + m)) | ((E + bias) << m) | (n - (1 << m))


def from_float32(dtype, f32_bits):
    """float32 bits -> FP8 `dtype` bits, PyTorch's rules."""
    v = decode("float32", f32_bits)
    sign = f32_bits >> 31
    if dtype == "float8_e8m0fnu":
        if isinstance(v, tuple):
            return 0xFF
        a = abs(v)
        if a < Fraction(2) ** -126:
            return 0x00 if a <= Fraction(2) ** -127 else 0x01
        k = a.numerator.bit_length() - a.denominator.bit_length()
        while Fraction(2) ** k > a:
            k -= 1
        while Fraction(2) ** (k + 1) <= a:
            k += 1
        code = k + 127 + (1 if a >= Fraction(3, 2) * Fraction(2) ** k else 0)
        return 0xFF if code >= 0xFF else code
    if isinstance(v, tuple):
        kind, s = v
        if kind == "nan" or dtype == "float8_e4m3fn":
            return (s << 7) | 0x7F
        return (s << 7) | 0x7C
    return _round_signed_fp8(dtype, sign, abs(v))


def from_value(dtype, value, negative=False):
    """An exact value (Fraction / int, or a ('nan'|'inf', sign) tuple) ->
    FP8 bits, PyTorch's way: to float32 (nearest even), then from_float32.
    `negative` is the sign of a zero."""
    if isinstance(value, tuple):
        kind, s = value
        f32 = (s << 31) | 0x7F800000 | (0x400000 if kind == "nan" else 0)
    else:
        f32 = encode_ieee("float32", Fraction(value), negative or value < 0)
    return from_float32(dtype, f32)


def to_ieee(src, bits, dtype):
    """FP8 `src` bits -> IEEE `dtype` bits: exact; a NaN keeps its sign and
    its mantissa at the top of the target's, made quiet."""
    e, m = IEEE[dtype]
    v = decode(src, bits)
    if isinstance(v, tuple):
        kind, s = v
        inf = (s << (e + m)) | (((1 << e) - 1) << m)
        if kind == "inf":
            return inf
        if src == "float8_e8m0fnu":
            payload, width = 0, 0
        else:
            width = _SIGNED[src][1]
            payload = bits & ((1 << width) - 1)
        return inf | (1 << (m - 1)) | (payload << (m - width))
    return encode_ieee(dtype, v, is_negative(src, bits))


def fp8_to_fp8(src, bits, dst):
    """One FP8 format to another: exact to float32, then from_float32."""
    return from_float32(dst, to_ieee(src, bits, "float32"))


def float32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]
