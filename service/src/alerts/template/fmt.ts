// Go's fmt as the template functions print, printf and println use it: Sprint's spacing rules,
// and Sprintf's verbs (%v %+v %s %q %d %b %o %O %x %X %c %U %e %E %f %F %g %G %t %T %%) with
// flags (+ - # space 0), width, precision and `*`, including Go's error forms for a wrong verb
// (%!d(string=x)), a missing operand (%!d(MISSING)) and extra ones (%!(EXTRA int=1)).
import { formatFloat } from './floats.ts';
import { goTimeString } from './time.ts';
import { formatValue, GoStruct, kindOf, mapKeys, MISSING, num, typeName } from './values.ts';

/** fmt.Sprint: operands written as %v, a space between two operands when neither is a string. */
export function sprint(args: unknown[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && kindOf(a) !== 'string' && kindOf(args[i - 1]) !== 'string') out += ' ';
    out += formatValue(a === MISSING ? null : a);
  });
  return out;
}

/** fmt.Sprintln: operands written as %v separated by spaces, then a newline. */
export function sprintln(args: unknown[]): string {
  return `${args.map((a) => formatValue(a === MISSING ? null : a)).join(' ')}\n`;
}

/** strconv.Quote (or QuoteToASCII): a double-quoted Go string literal. */
export function quote(s: string, asciiOnly = false, q = '"'): string {
  let out = q;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === q || ch === '\\') out += `\\${ch}`;
    else if (cp < 0x80 ? cp >= 0x20 && cp < 0x7f : !asciiOnly && /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch)) out += ch;
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\v') out += '\\v';
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return out + q;
}

interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width?: number;
  prec?: number;
}

function pad(s: string, f: Spec, numeric = false): string {
  const w = f.width ?? 0;
  const len = [...s].length;
  if (len >= w) return s;
  if (f.minus) return s + ' '.repeat(w - len);
  if (f.zero && numeric) {
    const sign = /^[+\- ]/.test(s) ? s[0] : '';
    const body = sign ? s.slice(1) : s;
    const prefix = /^0[xXbBoO]/.test(body) && f.sharp ? body.slice(0, 2) : '';
    return sign + prefix + '0'.repeat(w - len) + body.slice(prefix.length);
  }
  return ' '.repeat(w - len) + s;
}

function bad(verb: string, v: unknown): string {
  if (v === null || v === undefined || v === MISSING) return `%!${verb}(<nil>)`;
  return `%!${verb}(${typeName(v)}=${formatValue(v)})`;
}

function signed(body: string, negative: boolean, f: Spec): string {
  return (negative ? '-' : f.plus ? '+' : f.space ? ' ' : '') + body;
}

function formatInt(v: number | bigint, verb: string, f: Spec): string | null {
  const negative = v < 0;
  const abs = typeof v === 'bigint' ? (negative ? -v : v) : Math.abs(v);
  const digits = (base: number) => {
    let d = abs.toString(base);
    if (f.prec !== undefined) d = f.prec === 0 && abs == 0 ? '' : d.padStart(f.prec, '0');
    return d;
  };
  switch (verb) {
    case 'v':
    case 'd':
      return signed(digits(10), negative, f);
    case 'b':
      return signed((f.sharp ? '0b' : '') + digits(2), negative, f);
    case 'o':
      return signed((f.sharp ? '0' : '') + digits(8), negative, f);
    case 'O':
      return signed('0o' + digits(8), negative, f);
    case 'x':
      return signed((f.sharp ? '0x' : '') + digits(16), negative, f);
    case 'X':
      return signed((f.sharp ? '0X' : '') + digits(16).toUpperCase(), negative, f);
    case 'c':
      return String.fromCodePoint(Number(abs) <= 0x10ffff ? Number(v) : 0xfffd);
    case 'q':
      return quote(String.fromCodePoint(Number(abs) <= 0x10ffff ? Number(v) : 0xfffd), f.plus, "'");
    case 'U': {
      const u = `U+${abs.toString(16).toUpperCase().padStart(4, '0')}`;
      return f.sharp ? `${u} '${String.fromCodePoint(Number(v))}'` : u;
    }
    default:
      return null;
  }
}

function formatFloatVerb(v: number, verb: string, f: Spec): string | null {
  let s: string;
  switch (verb) {
    case 'v':
    case 'g':
    case 'G':
      s = formatFloat(v, verb === 'G' ? 'G' : 'g', f.prec ?? -1);
      break;
    case 'e':
    case 'E':
      s = formatFloat(v, verb, f.prec ?? 6);
      break;
    case 'f':
    case 'F':
      s = formatFloat(v, 'f', f.prec ?? 6);
      break;
    default:
      return null;
  }
  if (!s.startsWith('-') && !s.startsWith('+') && (f.plus || f.space)) s = (f.plus ? '+' : ' ') + s;
  if (s === '+Inf' && !f.plus) s = f.space ? ' Inf' : '+Inf';
  return s;
}

function formatString(s: string, verb: string, f: Spec): string | null {
  const cut = f.prec !== undefined ? [...s].slice(0, f.prec).join('') : s;
  switch (verb) {
    case 'v':
    case 's':
      return cut;
    case 'q':
      return f.sharp && !/[\x00-\x08\x0a-\x1f`\x7f]/.test(cut) ? `\`${cut}\`` : quote(cut, f.plus);
    case 'x':
    case 'X': {
      const bytes = [...Buffer.from(cut, 'utf8')].map((b) => b.toString(16).padStart(2, '0'));
      let out = f.space ? bytes.map((b) => (f.sharp ? `0x${b}` : b)).join(' ') : (f.sharp ? '0x' : '') + bytes.join('');
      if (verb === 'X') out = out.toUpperCase();
      return out;
    }
    default:
      return null;
  }
}

/** One operand under one verb, padded; null when the verb does not apply to the value. */
function formatOne(v: unknown, verb: string, f: Spec): string {
  if (verb === 'T') return pad(typeName(v === MISSING ? null : v), f);
  const kind = kindOf(v);
  switch (kind) {
    case 'missing':
    case 'nil':
      return verb === 'v' ? pad('<nil>', f) : bad(verb, null);
    case 'bool':
      return verb === 'v' || verb === 't' ? pad(v ? 'true' : 'false', f) : bad(verb, v);
    case 'int': {
      const s = formatInt(v as number | bigint, verb, f);
      return s !== null ? pad(s, f, !['c', 'q', 'U'].includes(verb)) : bad(verb, v);
    }
    case 'float': {
      const s = formatFloatVerb(num(v), verb, f);
      return s !== null ? pad(s, f, true) : bad(verb, v);
    }
    case 'string': {
      const s = formatString(v as string, verb, f);
      return s !== null ? pad(s, f) : bad(verb, v);
    }
    case 'time':
      return verb === 'v' || verb === 's' || verb === 'q' ? pad(verb === 'q' ? quote(goTimeString(v as Date)) : goTimeString(v as Date), f) : bad(verb, v);
    case 'slice':
      return `[${(v as unknown[]).map((x) => formatOne(x, verb, { ...f, width: f.width })).join(' ')}]`;
    case 'map': {
      const m = v as Record<string, unknown>;
      return `map[${mapKeys(m).map((k) => `${formatOne(k, verb, f)}:${formatOne(m[k], verb, f)}`).join(' ')}]`;
    }
    case 'struct': {
      const s = v as GoStruct;
      return `{${Object.entries(s.fields).map(([k, x]) => (f.plus && verb === 'v' ? `${k}:` : '') + formatOne(x, verb, { ...f, plus: false })).join(' ')}}`;
    }
    default:
      return pad(formatValue(v), f);
  }
}

/** fmt.Sprintf. */
export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argi = 0;
  let i = 0;
  while (i < format.length) {
    const pct = format.indexOf('%', i);
    if (pct === -1) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, pct);
    i = pct + 1;
    const f: Spec = { minus: false, plus: false, sharp: false, space: false, zero: false };
    for (; i < format.length; i++) {
      const c = format[i];
      if (c === '-') f.minus = true;
      else if (c === '+') f.plus = true;
      else if (c === '#') f.sharp = true;
      else if (c === ' ') f.space = true;
      else if (c === '0') f.zero = !f.minus;
      else break;
    }
    const number = (): number | undefined => {
      if (format[i] === '*') {
        i++;
        const a = args[argi++];
        return typeof a === 'number' && Number.isInteger(a) ? a : undefined;
      }
      const m = /^\d+/.exec(format.slice(i));
      if (!m) return undefined;
      i += m[0].length;
      return Number(m[0]);
    };
    f.width = number();
    if (f.width !== undefined && f.width < 0) {
      f.minus = true;
      f.width = -f.width;
    }
    if (format[i] === '.') {
      i++;
      f.prec = number() ?? 0;
    }
    if (i >= format.length) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const arg = args[argi++];
    out += verb === 'v' && f.sharp ? formatOne(arg, 'v', f) : formatOne(arg, verb, f);
  }
  if (argi < args.length) {
    out += `%!(EXTRA ${args
      .slice(argi)
      .map((a) => `${typeName(a === MISSING ? null : a)}=${formatValue(a === MISSING ? null : a)}`)
      .join(', ')})`;
  }
  return out;
}
