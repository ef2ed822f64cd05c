// Go's float formatting (strconv 'e', 'f', 'g'), on the decimal digits JavaScript gives: the
// shortest digits that round-trip (toExponential() without an argument), or rounded to a count.

interface Decimal {
  /** Significant digits, no trailing zeros. */
  digits: string;
  /** Position of the decimal point relative to the digits (1.5 → digits "15", dp 1). */
  dp: number;
}

/** The digits of |f|: shortest when `significant` is undefined, else rounded to that many. */
function decimal(f: number, significant?: number): Decimal {
  if (f === 0) return { digits: '', dp: 0 };
  const e = significant === undefined ? f.toExponential() : f.toExponential(Math.max(0, significant - 1));
  const [mant, exp] = e.split('e');
  const digits = mant!.replace('.', '').replace(/0+$/, '');
  return { digits, dp: Number(exp) + 1 };
}

const digitAt = (d: Decimal, i: number) => (i >= 0 && i < d.digits.length ? d.digits[i]! : '0');

function fmtE(d: Decimal, frac: number, e: string): string {
  let s = d.digits.length ? d.digits[0]! : '0';
  if (frac > 0) {
    s += '.';
    for (let i = 1; i <= frac; i++) s += digitAt(d, i);
  }
  const x = d.digits.length ? d.dp - 1 : 0;
  return `${s}${e}${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
}

function fmtF(d: Decimal, frac: number): string {
  let s = '';
  if (d.dp > 0) for (let i = 0; i < d.dp; i++) s += digitAt(d, i);
  else s = '0';
  if (frac > 0) {
    s += '.';
    for (let i = 0; i < frac; i++) s += digitAt(d, d.dp + i);
  }
  return s;
}

/**
 * strconv.FormatFloat(f, verb, prec, 64) for verb e, E, f, g, G; prec -1 is the shortest
 * representation. The sign is included; NaN and infinities as Go writes them.
 */
export function formatFloat(f: number, verb: 'e' | 'E' | 'f' | 'g' | 'G', prec: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  const neg = f < 0 || Object.is(f, -0);
  const a = Math.abs(f);
  const shortest = prec < 0;
  let body: string;
  switch (verb) {
    case 'e':
    case 'E': {
      const d = decimal(a, shortest ? undefined : prec + 1);
      body = fmtE(d, shortest ? Math.max(d.digits.length - 1, 0) : prec, verb);
      break;
    }
    case 'f': {
      if (shortest) {
        const d = decimal(a);
        body = fmtF(d, Math.max(d.digits.length - d.dp, 0));
      } else if (a < 1e21) body = a.toFixed(Math.min(prec, 100));
      else body = fmtF(decimal(a), prec);
      break;
    }
    default: {
      let p = prec === 0 ? 1 : prec;
      const d = decimal(a, shortest ? undefined : p);
      if (shortest) p = d.digits.length;
      let eprec = p;
      if (eprec > d.digits.length && d.digits.length >= d.dp) eprec = d.digits.length;
      if (shortest) eprec = 6;
      const exp = d.digits.length ? d.dp - 1 : 0;
      if (exp < -4 || exp >= eprec) {
        if (p > d.digits.length) p = d.digits.length;
        body = fmtE(d, Math.max(p - 1, 0), verb === 'G' ? 'E' : 'e');
      } else {
        if (p > d.dp) p = d.digits.length;
        body = fmtF(d, Math.max(p - d.dp, 0));
      }
    }
  }
  return neg ? `-${body}` : body;
}
