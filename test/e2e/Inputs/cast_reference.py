"""A reference for aoa's casts between all numeric dtypes, as numpy's astype,
written with the standard library only (fractions for exact arithmetic), so
that it shares nothing with aoa-run's conversions:

  - to a float: the exact value rounded ONCE to nearest, ties to even, with
    subnormals and overflow to Inf (IEEE 754); NaN stays NaN (quiet);
  - float to integer: truncation toward zero; NaN, +-Inf or a value whose
    truncation is out of range has no result (None);
  - integer to integer: the value, or None where it does not fit;
  - to bool: != 0 (NaN is true, -0.0 false); bool is 0 or 1;
  - to and from the FP8 formats (float8_e4m3fn, float8_e5m2,
    float8_e8m0fnu): fp8_reference.py's rules (PyTorch's: through float32,
    NaN or Inf past the range; widening exact, NaN payload kept).

Values are storage bits (unsigned integers), as expected_checkpoint.py
reads and writes them.
"""
import math
import struct
from fractions import Fraction

import fp8_reference as fp8

# (exponent bits, fraction bits) of the floats.
FLOATS = {"float64": (11, 52), "float32": (8, 23), "float16": (5, 10), "bfloat16": (8, 7)}
INTS = {"int64": (-2**63, 2**63 - 1), "int32": (-2**31, 2**31 - 1), "int16": (-2**15, 2**15 - 1),
        "int8": (-128, 127), "uint64": (0, 2**64 - 1), "uint32": (0, 2**32 - 1),
        "uint16": (0, 2**16 - 1), "uint8": (0, 255), "bool": (0, 1)}
SIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
        "int16": 2, "int8": 1, "uint64": 8, "uint32": 4, "uint16": 2, "uint8": 1, "bool": 1,
        "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e8m0fnu": 1}


def decode(dtype, bits):
    """Bits -> a Python int, a Fraction, or ('inf', sign) / ('nan', sign)."""
    if dtype in fp8.FP8:
        return fp8.decode(dtype, bits)
    if dtype in FLOATS:
        e, m = FLOATS[dtype]
        sign = bits >> (e + m)
        field = (bits >> m) & ((1 << e) - 1)
        mant = bits & ((1 << m) - 1)
        bias = (1 << (e - 1)) - 1
        if field == (1 << e) - 1:
            return ("nan" if mant else "inf", sign)
        if field == 0:
            value = Fraction(mant, 1) * Fraction(2) ** (1 - bias - m)
        else:
            value = Fraction(mant + (1 << m)) * Fraction(2) ** (field - bias - m)
        return -value if sign else value
    if dtype == "bool":
        return 1 if bits else 0
    width = 8 * SIZE[dtype]
    if not dtype.startswith("uint") and bits >= 1 << (width - 1):
        return bits - (1 << width)
    return bits


def encode_float(dtype, value):
    e, m = FLOATS[dtype]
    bias = (1 << (e - 1)) - 1
    inf = ((1 << e) - 1) << m
    if isinstance(value, tuple):
        kind, sign = value
        return (sign << (e + m)) | inf | ((1 << (m - 1)) if kind == "nan" else 0)
    sign = 1 if value < 0 else 0
    a = abs(Fraction(value))
    if a == 0:
        return sign << (e + m)
    E = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** E > a:
        E -= 1
    while Fraction(2) ** (E + 1) <= a:
        E += 1
    E = max(E, 1 - bias)  # subnormals share the smallest exponent
    scaled = a / Fraction(2) ** (E - m)
    n = math.floor(scaled)
    rest = scaled - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n == 1 << (m + 1):
        n >>= 1
        E += 1
    if E > bias:
        return (sign << (e + m)) | inf
    if n < (1 << m):
        return (sign << (e + m)) | n  # subnormal
    return (sign << (e + m)) | ((E + bias) << m) | (n - (1 << m))


def cast(src_dtype, bits, dst_dtype):
    """The bits of `bits` (of src_dtype) cast to dst_dtype; None when the
    value has no result."""
    value = decode(src_dtype, bits)
    negative_zero = (src_dtype in FLOATS or src_dtype in fp8.FP8) and \
        fp8.is_negative(src_dtype, bits) and value == 0
    if dst_dtype in fp8.FP8:
        if src_dtype in fp8.FP8:
            return fp8.fp8_to_fp8(src_dtype, bits, dst_dtype)
        return fp8.from_value(dst_dtype, value, negative_zero)
    if src_dtype in fp8.FP8 and dst_dtype in FLOATS:
        return fp8.to_ieee(src_dtype, bits, dst_dtype)
    if dst_dtype in FLOATS:
        # A Fraction has no sign of zero: -0.0 stays -0.0 (IEEE 754).
        if src_dtype in FLOATS and bits == 1 << sum(FLOATS[src_dtype]):
            return 1 << sum(FLOATS[dst_dtype])
        return encode_float(dst_dtype, value)
    if dst_dtype == "bool":
        return 1 if isinstance(value, tuple) or value != 0 else 0
    if isinstance(value, tuple):
        return None
    integer = math.trunc(value)
    low, high = INTS[dst_dtype]
    if not low <= integer <= high:
        return None
    return integer % (1 << (8 * SIZE[dst_dtype]))


def float32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def float64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]
