// JSON.parse without loss of numbers: an integer outside the exactly representable range of a
// double (|n| > 2^53 - 1), or a number a double cannot hold at all, is kept as its literal text in
// a BigNumberText, so 2^64 + 1 is stored as 18446744073709551617, never wrapped or rounded.
// Shared by every ingest path that reads JSON records (ingest/parsers/json.ts, ingest/bulk/parse.ts)
// and by the query rows, which read the stored fields back (query/run.ts); exactJsonText writes
// such values back as JSON text (OTLP bodies, the .evtx reader's events).

/** A JSON number too large for a double, kept as its exact text (stored faithfully, never wrapped). */
export class BigNumberText {
  constructor(readonly text: string) {}
  toJSON(): string {
    return this.text;
  }
}

/**
 * The JSON type of a parsed value: 'object', 'array', 'number', 'string', 'boolean' or 'null'. A
 * BigNumberText is an object in JS but a number in the JSON it came from: a record parser that
 * took it for an object would store a row the engine refuses.
 */
export function jsonTypeOf(v: unknown): 'object' | 'array' | 'number' | 'string' | 'boolean' | 'null' {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof BigNumberText) return 'number';
  return typeof v as 'object' | 'number' | 'string' | 'boolean';
}

/**
 * JSON text of a value in which a BigNumberText stays a bare number with every digit
 * (JSON.stringify would write it as a string): the OTLP body text, the .evtx reader's NDJSON.
 */
export function exactJsonText(v: unknown): string {
  if (v instanceof BigNumberText) return v.text;
  if (Array.isArray(v)) return `[${v.map(exactJsonText).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${exactJsonText(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Assigns an own property, also for the name `__proto__`. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

// A run of 16+ digits is the only way a JSON text can hold an integer beyond 2^53; without one,
// the built-in parser is exact and much faster. (A match inside a string only costs speed.)
const LONG_DIGITS = /\d{16}/;
// Exponents this large overflow a double; such numbers are kept as text too.
const BIG_EXPONENT = /[eE][+-]?\d{3}/;

/** JSON.parse, except that numbers a double cannot hold exactly become BigNumberText. */
export function parseJson(text: string): unknown {
  if (!LONG_DIGITS.test(text) && !BIG_EXPONENT.test(text)) return JSON.parse(text);
  return new ExactJsonParser(text).parseDocument();
}

class ExactJsonParser {
  private i = 0;
  constructor(private readonly s: string) {}

  parseDocument(): unknown {
    this.ws();
    const v = this.value(0);
    this.ws();
    if (this.i < this.s.length) this.fail('Unexpected data after the JSON value');
    return v;
  }

  private fail(msg: string): never {
    throw new SyntaxError(`${msg} at position ${this.i}`);
  }

  private ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  private value(depth: number): unknown {
    if (depth > 1000) this.fail('JSON nested too deeply');
    const c = this.s[this.i];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail(c === undefined ? 'Unexpected end of JSON input' : `Unexpected token ${JSON.stringify(c)}`);
    }
  }

  private literal(word: string, v: unknown): unknown {
    if (this.s.startsWith(word, this.i)) {
      this.i += word.length;
      return v;
    }
    return this.fail(`Unexpected token ${JSON.stringify(this.s[this.i])}`);
  }

  private object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.i++; // {
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('Expected a property name');
      const key = this.string();
      this.ws();
      if (this.s[this.i] !== ':') this.fail("Expected ':' after a property name");
      this.i++;
      this.ws();
      setOwn(out, key, this.value(depth + 1));
      this.ws();
      const c = this.s[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === '}') {
        this.i++;
        return out;
      }
      this.fail("Expected ',' or '}' in an object");
    }
  }

  private array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.i++; // [
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === ']') {
        this.i++;
        return out;
      }
      this.fail("Expected ',' or ']' in an array");
    }
  }

  private string(): string {
    const s = this.s;
    const start = ++this.i; // opening quote
    // Fast path: no escapes before the closing quote.
    for (let j = start; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c === 0x22) {
        this.i = j + 1;
        return s.slice(start, j);
      }
      if (c === 0x5c || c < 0x20) break;
    }
    // Slow path: let the built-in parser decode escapes after finding the string's end.
    let j = start;
    while (j < s.length) {
      const c = s.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) break;
      else if (c < 0x20) {
        this.i = j;
        this.fail('Bad control character in string literal');
      } else j++;
    }
    if (j >= s.length) {
      this.i = s.length;
      this.fail('Unterminated string in JSON');
    }
    const raw = s.slice(start - 1, j + 1);
    this.i = j + 1;
    try {
      return JSON.parse(raw) as string;
    } catch {
      this.i = start;
      return this.fail('Bad escape in string literal');
    }
  }

  private number(): number | BigNumberText {
    const s = this.s;
    const start = this.i;
    if (s[this.i] === '-') this.i++;
    if (s[this.i] === '0') this.i++;
    else if (this.digits() === 0) this.fail('No number after minus sign');
    let integer = true;
    if (s[this.i] === '.') {
      integer = false;
      this.i++;
      if (this.digits() === 0) this.fail('Unterminated fractional number');
    }
    if (s[this.i] === 'e' || s[this.i] === 'E') {
      integer = false;
      this.i++;
      if (s[this.i] === '+' || s[this.i] === '-') this.i++;
      if (this.digits() === 0) this.fail('Exponent part is missing a number');
    }
    const text = s.slice(start, this.i);
    const n = Number(text);
    if (integer) return Number.isSafeInteger(n) ? n : new BigNumberText(text);
    return Number.isFinite(n) ? n : new BigNumberText(text);
  }

  private digits(): number {
    const start = this.i;
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c >= 0x30 && c <= 0x39) this.i++;
      else break;
    }
    return this.i - start;
  }
}
