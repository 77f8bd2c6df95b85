"""Elementary functions that give the same bits on every machine.

numpy's transcendental ufuncs are not portable: ``np.sin``, ``np.exp`` and ``np.power``
pick a kernel by the CPU's vector extensions (on AVX-512 some come from SVML), and the
kernels differ in the last bit; libm differs between C libraries and their versions; BLAS
kernels sum in an order that depends on the core type. The synthetic worlds and the
simulated judges turn floats into discrete values (8-bit pixels, integer ratings, sampled
scores), and a last-bit difference at a boundary moves a byte: a 1-ULP difference in one
float32 ``x ** 1.2`` once changed a pixel, a JPEG block and so a whole world's digest.

Everything here is built from operations IEEE 754 rounds correctly on every machine and
that numpy never fuses (``+ - * /``, ``sqrt``, ``floor``, ``frexp``, ``ldexp``), in a fixed
order, in float64. The results agree with numpy's to about 1e-15 relative error (tested);
what matters is that they agree with themselves everywhere. Array functions return float64
unless given a float32 array, when they return float32 (computed in float64, then rounded).
The ``*_scalar`` twins take and return Python floats for per-request code, where a numpy
call per number would cost more than the arithmetic.
"""

from __future__ import annotations

import math

import numpy as np

# Splits of ln 2 and pi (fdlibm's, pi doubled) whose high parts end in zero bits, so that k * HI is
# exact for the integers k that the range reductions produce (|k| < 2**20).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_PI_1 = 3.14159265346825122833e00
_PI_1T = 1.21542010130123844986e-10
_INV_PI = 3.18309886183790671538e-01
_SQRT_HALF = 0.70710678118654752440
_TAN_PI_8 = 0.41421356237309504880
_MAX_TRIG_ARG = 1.0e6

_EXP_COEFFS = tuple(1.0 / math.factorial(i) for i in range(14))
"""Taylor coefficients of exp on |r| <= ln2/2; the first omitted term is below 1e-17."""
_LOG_COEFFS = tuple(1.0 / (2 * i + 1) for i in range(12))
"""log(m) = 2 s sum z**i / (2i + 1), s = (m - 1)/(m + 1), z = s*s, |s| <= 0.172."""
_SIN_COEFFS = tuple((-1.0) ** i / math.factorial(2 * i + 1) for i in range(12))
"""Taylor coefficients of sin on |r| <= pi/2; the first omitted term is below 2e-18."""
_ATAN_COEFFS = tuple((-1.0) ** i / (2 * i + 1) for i in range(13))
"""atan(t) = t sum (-t*t)**i / (2i + 1) on |t| <= tan(pi/16) after two reductions."""


def _f64(x) -> tuple[np.ndarray, bool]:
    arr = np.asarray(x)
    return arr.astype(np.float64), arr.dtype == np.float32


def _out(value: np.ndarray, single: bool):
    return value.astype(np.float32) if single else value


def _horner(coeffs: tuple[float, ...], z):
    """sum coeffs[i] * z**i, innermost first: one multiply and one add a step."""
    acc = coeffs[-1]
    for c in coeffs[-2::-1]:
        acc = acc * z + c
    return acc


# --- arrays ------------------------------------------------------------------------------------


def exp(x):
    """e**x, elementwise; underflows to 0 below -745 and overflows to inf above 709.78."""
    v, single = _f64(x)
    big = v > 709.78
    v = np.clip(v, -745.2, 709.78)
    k = np.floor(v * _INV_LN2 + 0.5)
    r = (v - k * _LN2_HI) - k * _LN2_LO
    out = np.ldexp(_horner(_EXP_COEFFS, r), k.astype(np.int32))
    return _out(np.where(big, np.inf, out), single)


def log(x):
    """Natural logarithm, elementwise; -inf at 0 and nan below it."""
    v, single = _f64(x)
    pos = v > 0
    m, e = np.frexp(np.where(pos, v, 1.0))
    low = m < _SQRT_HALF
    m = np.where(low, m * 2.0, m)
    e = (e - low).astype(np.float64)
    f = m - 1.0
    s = f / (f + 2.0)
    core = 2.0 * s * _horner(_LOG_COEFFS, s * s)
    out = e * _LN2_HI + (core + e * _LN2_LO)
    out = np.where(pos, out, np.where(v == 0, -np.inf, np.nan))
    return _out(out, single)


def power(x, y):
    """x**y for x >= 0 (0**y is 0 for y > 0), as exp(y log x)."""
    v, single = _f64(x)
    w = np.asarray(y, dtype=np.float64)
    safe = np.where(v > 0, v, 1.0)
    out = np.where(v > 0, exp(w * log(safe)), np.where(w > 0, 0.0, 1.0))
    return _out(out, single)


def softplus(x):
    """log(1 + e**x) without overflow: max(x, 0) + log(1 + e**-|x|)."""
    v, single = _f64(x)
    return _out(np.maximum(v, 0.0) + _log1p(exp(-np.abs(v))), single)


def _log1p(y: np.ndarray) -> np.ndarray:
    """log(1 + y) for y >= 0, accurate for tiny y: log(u) * y / (u - 1) with u = 1 + y."""
    u = 1.0 + y
    d = u - 1.0
    return np.where(d == 0.0, y, log(u) * (y / np.where(d == 0.0, 1.0, d)))


def sigmoid(x):
    """1 / (1 + e**-x)."""
    v, single = _f64(x)
    return _out(1.0 / (1.0 + exp(-v)), single)


def _sin_core(v: np.ndarray) -> np.ndarray:
    """sin(v): v = r + k pi with |r| <= pi/2, sin v = (-1)**k sin r, one odd polynomial."""
    if v.size and float(np.max(np.abs(v))) > _MAX_TRIG_ARG:
        raise ValueError(f"portable sin/cos take |x| <= {_MAX_TRIG_ARG:g}")
    k = np.floor(v * _INV_PI + 0.5)
    r = (v - k * _PI_1) - k * _PI_1T
    s = r * _horner(_SIN_COEFFS, r * r)
    odd = (k.astype(np.int64) & 1).astype(bool)
    return np.where(odd, -s, s)


def sin(x):
    """Sine, elementwise (|x| <= 1e6)."""
    v, single = _f64(x)
    return _out(_sin_core(v), single)


def cos(x):
    """Cosine, elementwise (|x| <= 1e6), as the sine of x + pi/2."""
    v, single = _f64(x)
    return _out(_sin_core(v + math.pi / 2.0), single)


def _atan_unit(t: np.ndarray) -> np.ndarray:
    """atan(t) for 0 <= t <= 1."""
    above = t > _TAN_PI_8
    t = np.where(above, (t - 1.0) / (t + 1.0), t)  # atan(t) = pi/4 + atan((t-1)/(t+1))
    for _ in range(2):  # atan(t) = 2 atan(t / (1 + sqrt(1 + t*t)))
        t = t / (1.0 + np.sqrt(1.0 + t * t))
    core = 4.0 * (t * _horner(_ATAN_COEFFS, t * t))
    return np.where(above, core + math.pi / 4.0, core)


def arctan2(y, x):
    """The angle of (x, y) in (-pi, pi], elementwise; 0 at the origin."""
    yv, single_y = _f64(y)
    xv, single_x = _f64(x)
    ay, ax = np.abs(yv), np.abs(xv)
    hi = np.maximum(ay, ax)
    lo = np.minimum(ay, ax)
    t = np.where(hi > 0, lo / np.where(hi > 0, hi, 1.0), 0.0)
    a = _atan_unit(t)
    a = np.where(ay > ax, math.pi / 2.0 - a, a)
    a = np.where(xv < 0, math.pi - a, a)
    a = np.where(yv < 0, -a, a)
    return _out(a, single_y and single_x)


# --- linear algebra in a fixed order ---------------------------------------------------------


def matvec(a, w) -> np.ndarray:
    """``a @ w`` for a 2-D ``a`` and 1-D ``w``, summed column by column in order.

    BLAS kernels sum in an order (and with fused multiply-adds) that depends on the CPU.
    """
    a = np.asarray(a, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    if a.ndim != 2 or w.shape != (a.shape[1],):
        raise ValueError(f"matvec needs (n, k) and (k,), got {a.shape} and {w.shape}")
    out = np.zeros(a.shape[0])
    for j in range(a.shape[1]):
        out = out + a[:, j] * w[j]
    return out


def matmul(a, b) -> np.ndarray:
    """``a @ b`` for 2-D arrays, each output column a `matvec`."""
    b = np.asarray(b, dtype=np.float64)
    return np.stack([matvec(a, b[:, j]) for j in range(b.shape[1])], axis=1)


def dot(u, v) -> float:
    """The inner product of two 1-D vectors, summed in order."""
    return float(matvec(np.asarray(u, dtype=np.float64)[None, :], v)[0])


def cholesky(c) -> np.ndarray:
    """Lower-triangular L with L L^T = c (symmetric positive definite), in Python floats."""
    c = np.asarray(c, dtype=np.float64)
    n = c.shape[0]
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            acc = float(c[i, j])
            for k in range(j):
                acc -= low[i][k] * low[j][k]
            if i == j:
                if acc <= 0.0:
                    raise ValueError("cholesky needs a positive definite matrix")
                low[i][j] = math.sqrt(acc)
            else:
                low[i][j] = acc / low[j][j]
    return np.array(low)


def solve(a, b) -> np.ndarray:
    """x with a x = b for a small symmetric positive definite ``a``, by Cholesky."""
    low = cholesky(a)
    b = [float(v) for v in np.asarray(b, dtype=np.float64)]
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum_in_order(low[i, k] * y[k] for k in range(i))) / low[i, i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum_in_order(low[k, i] * x[k] for k in range(i + 1, n))) / low[i, i]
    return np.array(x)


def sum_in_order(values) -> float:
    """Left-to-right sum (``sum`` on Python floats, stated so that nobody 'fixes' it)."""
    total = 0.0
    for v in values:
        total += float(v)
    return total


# --- Python floats -------------------------------------------------------------------------------


def exp_scalar(x: float) -> float:
    """e**x for a Python float, bit-identical to `exp`."""
    if x > 709.78:
        return math.inf
    x = max(float(x), -745.2)
    k = math.floor(x * _INV_LN2 + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    return math.ldexp(_horner(_EXP_COEFFS, r), k)


def log_scalar(x: float) -> float:
    """Natural logarithm of a positive Python float, bit-identical to `log`."""
    if not x > 0:
        raise ValueError(f"log_scalar needs a positive number, got {x}")
    m, e = math.frexp(float(x))
    if m < _SQRT_HALF:
        m, e = m * 2.0, e - 1
    f = m - 1.0
    s = f / (f + 2.0)
    return e * _LN2_HI + (2.0 * s * _horner(_LOG_COEFFS, s * s) + e * _LN2_LO)


def log10_scalar(x: float) -> float:
    """Base-10 logarithm of a positive Python float."""
    return log_scalar(x) / _LN10


def log2_scalar(x: float) -> float:
    """Base-2 logarithm of a positive Python float."""
    return log_scalar(x) / _LN2


def sin_scalar(x: float) -> float:
    """Sine of a Python float, bit-identical to `sin`."""
    return float(sin(np.float64(x)))


def cos_scalar(x: float) -> float:
    """Cosine of a Python float, bit-identical to `cos`."""
    return float(cos(np.float64(x)))


def atan2_scalar(y: float, x: float) -> float:
    """The angle of (x, y), bit-identical to `arctan2`."""
    return float(arctan2(np.float64(y), np.float64(x)))


def pow_scalar(x: float, y: float) -> float:
    """x**y for x >= 0, bit-identical to `power`."""
    if x == 0:
        return 0.0 if y > 0 else 1.0
    return exp_scalar(y * log_scalar(x))


_LN2 = 0.69314718055994530942
_LN10 = 2.30258509299404568402
