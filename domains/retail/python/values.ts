// The values a `calculate` expression can produce in Python (int, float, complex, the empty tuple, Ellipsis)
// and CPython's arithmetic on them: the same results, the same exceptions with the same messages.
import { RetailToolError } from '../errors';
import { cPow as libmPow, floatRepr, floatReprNoDot0, intToFloat, intTrueDivide } from './float';

export type BinaryOp = '+' | '-' | '*' | '/' | '//' | '**';

/** Python's sys.get_int_max_str_digits() default: a longer int literal does not compile. */
export const INT_MAX_STR_DIGITS = 4300;

export type Value =
  | { readonly t: 'int'; readonly v: bigint }
  | { readonly t: 'float'; readonly v: number }
  | { readonly t: 'complex'; readonly re: number; readonly im: number }
  | { readonly t: 'tuple' }
  | { readonly t: 'ellipsis' };

type Complex = { readonly re: number; readonly im: number };

/** Ints larger than this many bits are refused (Python would compute them, for minutes and gigabytes). */
export const MAX_INT_BITS = 1 << 24;

const int = (v: bigint): Value => ({ t: 'int', v });
const float = (v: number): Value => ({ t: 'float', v });
const complex = ({ re, im }: Complex): Value => ({ t: 'complex', re, im });

const typeError = (message: string) => new RetailToolError(message, 'TypeError');
const zeroDivision = (message: string) => new RetailToolError(message, 'ZeroDivisionError');
const overflow = (message: string) => new RetailToolError(message, 'OverflowError');

export function typeName(value: Value): string {
  return value.t;
}

function bitLength(n: bigint): number {
  return n === 0n ? 0 : (n < 0n ? -n : n).toString(2).length;
}

function checkSize(bits: number): void {
  if (bits > MAX_INT_BITS) {
    throw new RetailToolError(`integer result too large (over ${MAX_INT_BITS} bits)`, 'MemoryError');
  }
}

/** PyLong_AsDouble / PyFloat_AsDouble. */
export function toFloat(value: Extract<Value, { t: 'int' | 'float' }>): number {
  if (value.t === 'float') return value.v;
  const x = intToFloat(value.v);
  if (x === undefined) throw overflow('int too large to convert to float');
  return x;
}

function toComplex(value: Extract<Value, { t: 'int' | 'float' | 'complex' }>): Complex {
  return value.t === 'complex' ? value : { re: toFloat(value), im: 0 };
}

/** str(value), as a call's error message shows its callee. */
export function pyStr(value: Value): string {
  switch (value.t) {
    case 'int': {
      const digits = (value.v < 0n ? -value.v : value.v).toString();
      if (digits.length > INT_MAX_STR_DIGITS) {
        throw new RetailToolError(
          `Exceeds the limit (${INT_MAX_STR_DIGITS} digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit`,
        );
      }
      return value.v.toString();
    }
    case 'float':
      return floatRepr(value.v);
    case 'complex': {
      if (value.re === 0 && !Object.is(value.re, -0)) return `${floatReprNoDot0(value.im)}j`;
      const im = floatReprNoDot0(value.im);
      const signed = im.startsWith('-') ? im : `+${im}`;
      return `(${floatReprNoDot0(value.re)}${signed}j)`;
    }
    case 'tuple':
      return '()';
    case 'ellipsis':
      return 'Ellipsis';
  }
}

// --- unary ------------------------------------------------------------------------------------------------

export function unary(op: '+' | '-', value: Value): Value {
  switch (value.t) {
    case 'int':
      return op === '-' ? int(-value.v) : value;
    case 'float':
      return op === '-' ? float(-value.v) : value;
    case 'complex':
      return op === '-' ? complex({ re: -value.re, im: -value.im }) : value;
    default:
      throw typeError(`bad operand type for unary ${op}: '${typeName(value)}'`);
  }
}

// --- binary -----------------------------------------------------------------------------------------------

const OP_NAMES: Record<BinaryOp, string> = { '+': '+', '-': '-', '*': '*', '/': '/', '//': '//', '**': '** or pow()' };

function unsupported(op: BinaryOp, a: Value, b: Value): RetailToolError {
  return typeError(`unsupported operand type(s) for ${OP_NAMES[op]}: '${typeName(a)}' and '${typeName(b)}'`);
}

type IntValue = Extract<Value, { t: 'int' }>;
type FloatValue = Extract<Value, { t: 'float' }>;
type ComplexValue = Extract<Value, { t: 'complex' }>;
type Real = IntValue | FloatValue;
type Numeric = Real | ComplexValue;
const isNumeric = (value: Value): value is Numeric => value.t === 'int' || value.t === 'float' || value.t === 'complex';

export function binary(op: BinaryOp, a: Value, b: Value): Value {
  if (isNumeric(a) && isNumeric(b)) {
    if (a.t === 'complex' || b.t === 'complex') return complexOp(op, a, b);
    if (a.t === 'float' || b.t === 'float') return floatOp(op, a, b);
    return intOp(op, a.v, b.v);
  }
  // A tuple concatenates with a tuple and repeats by an int (sequence protocol, after the number slots).
  if (op === '+' && a.t === 'tuple') {
    if (b.t === 'tuple') return a;
    throw typeError(`can only concatenate tuple (not "${typeName(b)}") to tuple`);
  }
  if (op === '*' && (a.t === 'tuple' || b.t === 'tuple')) {
    const count = a.t === 'tuple' ? b : a;
    if (count.t !== 'int') throw typeError(`can't multiply sequence by non-int of type '${typeName(count)}'`);
    if (count.v > 2n ** 63n - 1n || count.v < -(2n ** 63n)) {
      throw overflow("cannot fit 'int' into an index-sized integer");
    }
    return { t: 'tuple' };
  }
  throw unsupported(op, a, b);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function intOp(op: BinaryOp, a: bigint, b: bigint): Value {
  switch (op) {
    case '+':
      return int(a + b);
    case '-':
      return int(a - b);
    case '*':
      checkSize(bitLength(a) + bitLength(b));
      return int(a * b);
    case '/': {
      if (b === 0n) throw zeroDivision('division by zero');
      const q = intTrueDivide(a, b);
      if (q === undefined) throw overflow('integer division result too large for a float');
      return float(q);
    }
    case '//':
      if (b === 0n) throw zeroDivision('integer division or modulo by zero');
      return int(floorDiv(a, b));
    case '**':
      if (b < 0n) return floatPow({ t: 'int', v: a }, { t: 'int', v: b });
      if (a !== 0n && a !== 1n && a !== -1n) checkSize(Number(b) * bitLength(a));
      return int(a ** b);
  }
}

/** CPython's _float_div_mod: the floor quotient, snapped to an integral value. */
function floatFloorDiv(vx: number, wx: number): number {
  const mod = vx % wx; // fmod
  let div = (vx - mod) / wx;
  // C's `if (mod)` and `if (div)`: true for a NaN too. The remainder takes the divisor's sign.
  if (mod !== 0 && wx < 0 !== mod < 0) div -= 1.0;
  if (div !== 0) {
    let floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
  }
  return Math.sign(vx / wx) < 0 || Object.is(vx / wx, -0) ? -0 : 0; // zero with the sign of vx/wx
}

function floatOp(op: BinaryOp, a: Real, b: Real): Value {
  if (op === '**') return floatPow(a, b);
  const x = toFloat(a);
  const y = toFloat(b);
  switch (op) {
    case '+':
      return float(x + y);
    case '-':
      return float(x - y);
    case '*':
      return float(x * y);
    case '/':
      if (y === 0) throw zeroDivision('float division by zero');
      return float(x / y);
    case '//':
      if (y === 0) throw zeroDivision('float floor division by zero');
      return float(floatFloorDiv(x, y));
  }
}

const isOddInteger = (x: number): boolean => Math.abs(x) % 2.0 === 1.0;

/** CPython's float_pow (v ** w with v, w converted to float), which turns complex for (-x) ** fraction. */
function floatPow(a: Real, b: Real): Value {
  let iv = toFloat(a);
  const iw = toFloat(b);
  if (iw === 0) return float(1.0);
  if (Number.isNaN(iv)) return float(iv);
  if (Number.isNaN(iw)) return float(iv === 1.0 ? 1.0 : iw);
  if (!Number.isFinite(iw)) {
    iv = Math.abs(iv);
    if (iv === 1.0) return float(1.0);
    if (iw > 0.0 === iv > 1.0) return float(Math.abs(iw));
    return float(0.0);
  }
  if (!Number.isFinite(iv)) {
    const odd = isOddInteger(iw);
    if (iw > 0.0) return float(odd ? iv : Math.abs(iv));
    return float(odd ? (iv < 0 ? -0 : 0) : 0.0);
  }
  if (iv === 0.0) {
    const odd = isOddInteger(iw);
    if (iw < 0.0) throw zeroDivision('0.0 cannot be raised to a negative power');
    return float(odd ? iv : 0.0);
  }
  let negate = false;
  if (iv < 0.0) {
    if (iw !== Math.floor(iw)) return complexPow(toComplex(a), toComplex(b));
    iv = -iv;
    negate = isOddInteger(iw);
  }
  if (iv === 1.0) return float(negate ? -1.0 : 1.0);
  let ix = libmPow(iv, iw);
  if (!Number.isFinite(ix)) throw overflow("(34, 'Numerical result out of range')");
  if (negate) ix = -ix;
  return float(ix);
}

// --- complex (CPython's Objects/complexobject.c) -------------------------------------------------------------

class EDOM extends Error {}

const cSum = (a: Complex, b: Complex): Complex => ({ re: a.re + b.re, im: a.im + b.im });
const cDiff = (a: Complex, b: Complex): Complex => ({ re: a.re - b.re, im: a.im - b.im });
const cProd = (a: Complex, b: Complex): Complex => ({ re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re });

function cQuot(a: Complex, b: Complex): Complex {
  const absBre = b.re < 0 ? -b.re : b.re;
  const absBim = b.im < 0 ? -b.im : b.im;
  if (absBre >= absBim) {
    if (absBre === 0.0) throw new EDOM();
    const ratio = b.im / b.re;
    const denom = b.re + b.im * ratio;
    return { re: (a.re + a.im * ratio) / denom, im: (a.im - a.re * ratio) / denom };
  }
  if (absBim >= absBre) {
    const ratio = b.re / b.im;
    const denom = b.re * ratio + b.im;
    return { re: (a.re * ratio + a.im) / denom, im: (a.im * ratio - a.re) / denom };
  }
  return { re: NaN, im: NaN };
}

function cPow(a: Complex, b: Complex): Complex {
  if (b.re === 0 && b.im === 0) return { re: 1, im: 0 };
  if (a.re === 0 && a.im === 0) {
    if (b.im !== 0 || b.re < 0) throw new EDOM();
    return { re: 0, im: 0 };
  }
  const vabs = Math.hypot(a.re, a.im);
  let len = Math.pow(vabs, b.re);
  const at = Math.atan2(a.im, a.re);
  let phase = at * b.re;
  if (b.im !== 0) {
    len /= Math.exp(at * b.im);
    phase += b.im * Math.log(vabs);
  }
  return { re: len * Math.cos(phase), im: len * Math.sin(phase) };
}

function cPowu(x: Complex, n: number): Complex {
  let r: Complex = { re: 1, im: 0 };
  let p = x;
  for (let mask = 1; mask > 0 && n >= mask; mask *= 2) {
    if (Math.floor(n / mask) % 2 === 1) r = cProd(r, p);
    p = cProd(p, p);
  }
  return r;
}

function cPowi(x: Complex, n: number): Complex {
  if (n > 100 || n < -100) return cPow(x, { re: n, im: 0 });
  if (n > 0) return cPowu(x, n);
  return cQuot({ re: 1, im: 0 }, cPowu(x, -n));
}

function complexPow(a: Complex, b: Complex): Value {
  let p: Complex;
  try {
    const intExponent = Math.trunc(b.re);
    p = b.im === 0 && b.re === intExponent && Math.abs(intExponent) < 2 ** 63 ? cPowi(a, intExponent) : cPow(a, b);
  } catch (e) {
    if (e instanceof EDOM) throw zeroDivision('0.0 to a negative or complex power');
    throw e;
  }
  if (Math.abs(p.re) === Infinity || Math.abs(p.im) === Infinity) throw overflow('complex exponentiation');
  return complex(p);
}

function complexOp(op: BinaryOp, a: Numeric, b: Numeric): Value {
  if (op === '//') throw unsupported(op, a, b);
  const x = toComplex(a);
  const y = toComplex(b);
  switch (op) {
    case '+':
      return complex(cSum(x, y));
    case '-':
      return complex(cDiff(x, y));
    case '*':
      return complex(cProd(x, y));
    case '/':
      try {
        return complex(cQuot(x, y));
      } catch (e) {
        if (e instanceof EDOM) throw zeroDivision('complex division by zero');
        throw e;
      }
    case '**':
      return complexPow(x, y);
  }
}

// --- calls ------------------------------------------------------------------------------------------------

/** f(arg), f(*arg), f(**arg): nothing in this alphabet is callable, but the arguments are checked first. */
export function call(
  func: Value,
  arg: { kind: 'positional' | 'star' | 'doublestar'; value: Value } | undefined,
): never {
  if (arg?.kind === 'star' && arg.value.t !== 'tuple') {
    throw typeError(`${pyStr(func)} argument after * must be an iterable, not ${typeName(arg.value)}`);
  }
  if (arg?.kind === 'doublestar') {
    throw typeError(`${pyStr(func)} argument after ** must be a mapping, not ${typeName(arg.value)}`);
  }
  throw typeError(`'${typeName(func)}' object is not callable`);
}
