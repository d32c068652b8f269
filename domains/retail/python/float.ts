// Python's float semantics where JavaScript differs: repr() (shortest digits, but fixed notation only for
// decimal exponents -4 < e <= 16, and always a ".0" or an exponent), round(x, n) (correctly rounded on
// the exact binary value, ties to even, sign kept), and the exact int <-> float conversions.

/** repr(x) / str(x) of a Python float: `100.0`, `54.04`, `1e-05`, `1e+16`, `-0.0`, `inf`, `nan`. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  // toExponential() without digits gives the shortest digits that read back as x, as Python's repr does.
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const exp = Number(exponent);
  const decpt = exp + 1; // the position of the decimal point relative to the digits
  let body: string;
  if (decpt <= -4 || decpt > 16) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    body = `${digits[0]}${frac}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  } else if (decpt <= 0) {
    body = `0.${'0'.repeat(-decpt)}${digits}`;
  } else if (decpt >= digits.length) {
    body = `${digits}${'0'.repeat(decpt - digits.length)}.0`;
  } else {
    body = `${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  return negative ? `-${body}` : body;
}

/** repr() of a float inside a complex number: as floatRepr but without the ".0" ("1", "2.5", "1e+16"). */
export function floatReprNoDot0(x: number): string {
  const s = floatRepr(x);
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

const view = new DataView(new ArrayBuffer(8));

/** x = (-1)^sign * mantissa * 2^exponent, exactly (x finite). */
export function decompose(x: number): { negative: boolean; mantissa: bigint; exponent: number } {
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const negative = hi >>> 31 === 1;
  if (biased === 0) return { negative, mantissa: fraction, exponent: -1074 };
  return { negative, mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

/** Python's round(x, ndigits) for a float x and a small ndigits >= 0 (the tools use 2). */
export function pyRound(x: number, ndigits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const { negative, mantissa, exponent } = decompose(x);
  if (exponent >= 0) return x; // an integer: nothing after the decimal point
  const scaled = mantissa * 10n ** BigInt(ndigits);
  const denominator = 1n << BigInt(-exponent);
  let q = scaled / denominator;
  const twiceRemainder = 2n * (scaled % denominator);
  if (twiceRemainder > denominator || (twiceRemainder === denominator && q % 2n === 1n)) q += 1n;
  // q has at most 18 digits here, so the decimal string converts back correctly rounded.
  const magnitude = Number(`${q}e-${ndigits}`);
  return negative ? -magnitude : magnitude;
}

/** float(n) for a Python int: correctly rounded; OverflowError past the float range. */
export function intToFloat(n: bigint): number | undefined {
  const x = Number(n);
  return Number.isFinite(x) ? x : undefined;
}

function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

/** 2^e * m for an integer m < 2^54 whose result is exactly representable (no rounding happens). */
function ldexp(m: number, e: number): number {
  let x = m;
  let rest = e;
  while (rest > 1000) {
    x *= 2 ** 1000;
    rest -= 1000;
  }
  while (rest < -1000) {
    x *= 2 ** -1000;
    rest += 1000;
  }
  return x * 2 ** rest;
}

/**
 * n / d * 2^exp2 for positive bigints n, d, correctly rounded to a float (ties to even, subnormals
 * included); undefined when it overflows the float range.
 */
export function ratioToFloat(n: bigint, d: bigint, exp2: number): number | undefined {
  // Scale so that the integer quotient has 55 or 56 bits: 53 kept, a rounding bit, and room.
  const shift = bitLength(n) - bitLength(d) - 55;
  if (shift > 0) d <<= BigInt(shift);
  else n <<= BigInt(-shift);
  const q = n / d;
  const sticky = n % d !== 0n;
  // value = (q + a fraction, sticky) * 2^scale, q of 55 or 56 bits
  const scale = shift + exp2;
  const qBits = bitLength(q);
  const topExponent = qBits - 1 + scale; // value in [2^topExponent, 2^(topExponent+1))
  if (topExponent > 1023) return undefined;
  // Precision kept: 53 bits, fewer for a subnormal result (whose last bit weighs 2^-1074).
  const keep = topExponent >= -1022 ? 53 : 53 - (-1022 - topExponent);
  if (keep < 0) return 0; // below half of the smallest subnormal
  if (keep === 0) {
    // in [2^-1075, 2^-1074): rounds up to 2^-1074, except exactly 2^-1075 (a tie, to even: 0)
    const exactlyHalf = q === 1n << BigInt(qBits - 1) && !sticky;
    return exactlyHalf ? 0 : 2 ** -1074;
  }
  const drop = BigInt(qBits - keep);
  let kept = q >> drop;
  const remainder = q & ((1n << drop) - 1n);
  const halfway = 1n << (drop - 1n);
  if (remainder > halfway || (remainder === halfway && (sticky || kept % 2n === 1n))) kept += 1n;
  if (topExponent === 1023 && bitLength(kept) > 53) return undefined; // rounded up to 2^1024
  return ldexp(Number(kept), scale + Number(drop));
}

/**
 * a / b for Python ints, correctly rounded as CPython's long_true_divide; undefined when the result
 * overflows the float range. b must not be 0.
 */
export function intTrueDivide(a: bigint, b: bigint): number | undefined {
  const negative = a < 0n !== b < 0n;
  if (a === 0n) return negative ? -0 : 0;
  const small = 1n << 53n;
  const n = a < 0n ? -a : a;
  const d = b < 0n ? -b : b;
  if (n <= small && d <= small) return Number(a) / Number(b); // exact operands: IEEE division rounds once
  const q = ratioToFloat(n, d, 0);
  if (q === undefined) return undefined;
  return negative ? -q : q;
}

function isqrt(a: bigint): bigint {
  if (a < 2n) return a;
  let x = 1n << BigInt(Math.ceil(bitLength(a) / 2)); // >= sqrt(a)
  for (;;) {
    const y = (x + a / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** sqrt(n / d * 2^exp2) for positive bigints n, d, correctly rounded; undefined when it overflows. */
function sqrtRatioToFloat(n: bigint, d: bigint, exp2: number): number | undefined {
  if (exp2 % 2 !== 0) {
    n <<= 1n;
    exp2 -= 1;
  }
  // A = n / d * 4^s with about 120 bits: its integer square root has 60, the rest is a sticky bit.
  const s = Math.ceil((120 - (bitLength(n) - bitLength(d))) / 2);
  const num = s >= 0 ? n << BigInt(2 * s) : n;
  const den = s >= 0 ? d : d << BigInt(-2 * s);
  const a = num / den;
  const r = isqrt(a);
  const exact = r * r === a && num % den === 0n;
  // The root lies in [r, r + 1): r + 1/2 stands for "strictly between" when rounding to 53 bits.
  return ratioToFloat(exact ? 2n * r : 2n * r + 1n, 2n, exp2 / 2 - s);
}

/** Exponents up to this size are raised exactly (then rounded once), as glibc's pow rounds. */
const EXACT_POW_LIMIT = 4096;

/**
 * C's pow(x, y) for finite x > 0, x != 1, finite y != 0. glibc's pow is correctly rounded in all but
 * vanishingly rare cases; so is this one for an integral or half-integral y (computed exactly, rounded
 * once). Any other y goes to Math.pow, which may differ from glibc's in the last bit. Infinity when it
 * overflows.
 */
export function cPow(x: number, y: number): number {
  const twiceY = 2 * y;
  if (Number.isInteger(twiceY) && Math.abs(y) <= EXACT_POW_LIMIT) {
    let { mantissa, exponent } = decompose(x);
    while ((mantissa & 1n) === 0n) {
      mantissa >>= 1n;
      exponent++;
    }
    // x^y = (m * 2^e)^y; for a half-integral y, the square root of x^(2y)
    const k = Number.isInteger(y) ? y : twiceY;
    const power = mantissa ** BigInt(Math.abs(k));
    const [num, den] = k > 0 ? [power, 1n] : [1n, power];
    const result = Number.isInteger(y)
      ? ratioToFloat(num, den, exponent * k)
      : sqrtRatioToFloat(num, den, exponent * k);
    return result ?? Infinity;
  }
  return Math.pow(x, y);
}
