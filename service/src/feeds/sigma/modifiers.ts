// Sigma's value modifiers (sigma-specification, appendix "Modifiers", v2.1), one function each,
// applied in the order a rule names them (`field|mod1|mod2`). Each takes a detection item (a
// field, or none for keywords, with its values) and gives it back changed: transformation
// modifiers rewrite the values, type modifiers say how they are compared (matchers.ts makes the
// query condition from the result).
import { isAny, literal, plainText, withLeadingAny, withTrailingAny, type SigmaString } from './sigma-string.ts';
import { SigmaSkip } from './skip.ts';

/** A rule value as YAML gave it (numbers keep the text they were written with). */
export type RawValue = string | { number: number; text: string } | boolean | null;

/** One value of an item with its alternatives: `windash` and `base64offset` make several, any of which matches. */
export type Alternatives = SigmaString[];

export interface Item {
  /** The Sigma field name, or null for a keyword search over the whole event. */
  field: string | null;
  /** Raw values, until the item is read as strings (a type modifier may read them otherwise). */
  raw: RawValue[];
  /** The values as Sigma strings, each with its alternatives. */
  values: Alternatives[];
  /** How values combine: any of them (default), or all (`all`). */
  join: 'any' | 'all';
  /** How a value is compared with the field. */
  kind: 'match' | 're' | 'cidr' | 'gt' | 'gte' | 'lt' | 'lte' | 'exists' | 'fieldref';
  /** Flags of `re`: i, m, s. */
  reFlags: string;
  /** `neq`: the field is none of the values. */
  negate: boolean;
}

type Modifier = (item: Item) => Item;

const mapValues = (item: Item, f: (s: SigmaString) => SigmaString): Item => ({ ...item, values: item.values.map((alts) => alts.map(f)) });
const expandValues = (item: Item, f: (s: SigmaString) => SigmaString[]): Item => ({ ...item, values: item.values.map((alts) => alts.flatMap(f)) });

function onlyMatch(item: Item, name: string): void {
  if (item.kind !== 'match') throw new SigmaSkip('unsupported_modifier', `the modifier "${name}" cannot follow "${item.kind}"`);
}

// ---- Generic modifiers ----

/** `contains`: puts `*` wildcards around the values, so the value is matched anywhere in the field. */
export const contains: Modifier = (item) => (onlyMatch(item, 'contains'), mapValues(item, (s) => withTrailingAny(withLeadingAny(s))));

/** `startswith`: the value is expected at the beginning of the field's content. */
export const startswith: Modifier = (item) => (onlyMatch(item, 'startswith'), mapValues(item, withTrailingAny));

/** `endswith`: the value is expected at the end of the field's content. */
export const endswith: Modifier = (item) => (onlyMatch(item, 'endswith'), mapValues(item, withLeadingAny));

/** `all`: the values of a list are linked with AND instead of OR. */
export const all: Modifier = (item) => ({ ...item, join: 'all' });

/** `exists`: the field must (true) or must not (false) be present in the event. */
export const exists: Modifier = (item) => {
  const v = item.raw[0];
  if (item.raw.length !== 1 || (typeof v !== 'boolean' && v !== 'true' && v !== 'false')) {
    throw new SigmaSkip('invalid_value', 'the modifier "exists" takes true or false');
  }
  return { ...item, kind: 'exists', raw: [v === true || v === 'true'] };
};

/** `cased`: values are applied case-sensitively (Sigma's default is case-insensitive). */
export const cased: Modifier = (item) => mapValues(item, (s) => ({ ...s, cased: true }));

/** `neq`: the field is different from the specified values. */
export const neq: Modifier = (item) => ({ ...item, negate: true });

// ---- String modifiers ----

/** Windows command-line flags start with any of these; `windash` tries each in place of the others. */
const DASHES = ['-', '/', '\u2013', '\u2014', '\u2015'];
const FLAG_DASH = /(?<![\p{L}\p{N}_])[-/\u2013\u2014\u2015](?=[\p{L}\p{N}_])/gu;
/** More permutations of one value than this and the rule is skipped (three flags: 125). */
export const MAX_WINDASH_VARIANTS = 125;

/**
 * `windash`: all permutations of `-`, `/`, `–` (en dash), `—` (em dash) and `―` (horizontal bar)
 * where a command-line flag starts (a dash or slash right before a word), so `-enc` and `/enc`
 * are the same.
 */
export const windash: Modifier = (item) => {
  onlyMatch(item, 'windash');
  return expandValues(item, (s) => {
    let variants: SigmaString[] = [{ ...s, pieces: [] }];
    for (const p of s.pieces) {
      if (!('lit' in p)) {
        variants = variants.map((v) => ({ ...v, pieces: [...v.pieces, p] }));
        continue;
      }
      const parts = p.lit.split(FLAG_DASH);
      const dashes = parts.length - 1;
      if (dashes === 0) {
        variants = variants.map((v) => appendLit(v, p.lit));
        continue;
      }
      if (variants.length * DASHES.length ** dashes > MAX_WINDASH_VARIANTS) {
        throw new SigmaSkip('unsupported_value', `windash of "${s.original}" would make more than ${MAX_WINDASH_VARIANTS} variants`);
      }
      let texts = [parts[0]!];
      for (const part of parts.slice(1)) texts = texts.flatMap((t) => DASHES.map((d) => t + d + part));
      variants = variants.flatMap((v) => texts.map((t) => appendLit(v, t)));
    }
    return variants;
  });
};

function appendLit(s: SigmaString, text: string): SigmaString {
  const last = s.pieces[s.pieces.length - 1];
  if (last && 'lit' in last) return { ...s, pieces: [...s.pieces.slice(0, -1), { lit: last.lit + text }] };
  return { ...s, pieces: [...s.pieces, { lit: text }] };
}

/** `re`: the value is a regular expression, matched case-sensitively unless `i`. */
export const re: Modifier = (item) => {
  onlyMatch(item, 're');
  return { ...item, kind: 're' };
};

const reFlag =
  (flag: 'i' | 'm' | 's'): Modifier =>
  (item) => {
    if (item.kind !== 're') throw new SigmaSkip('unsupported_modifier', `the modifier "${flag}" applies only after "re"`);
    return { ...item, reFlags: item.reFlags.includes(flag) ? item.reFlags : item.reFlags + flag };
  };
/** `re` sub-modifier `i`: case-insensitive matching. */
export const i = reFlag('i');
/** `re` sub-modifier `m`: multi-line, `^` and `$` match at line starts and ends. */
export const m = reFlag('m');
/** `re` sub-modifier `s`: single-line, `.` also matches a newline. */
export const s = reFlag('s');

/** The bytes of a value an encoding modifier works on: its text as UTF-8, or the bytes utf16 made. */
function bytesOf(v: SigmaString, modifier: string): Buffer {
  const text = plainText(v);
  if (text === null) throw new SigmaSkip('unsupported_value', `the modifier "${modifier}" cannot encode the wildcards of "${v.original}"`);
  return Buffer.from(text, v.binary ? 'latin1' : 'utf8');
}

/** `base64`: the value is encoded with Base64 (then compared exactly: Base64 has case). */
export const base64: Modifier = (item) => {
  onlyMatch(item, 'base64');
  return mapValues(item, (v) => ({ ...literal(bytesOf(v, 'base64').toString('base64'), v), cased: true, binary: false }));
};

/**
 * `base64offset`: a value somewhere inside a Base64 text looks different at each of the three
 * byte offsets it can start at; the three static middles, any of which matches.
 */
export const base64offset: Modifier = (item) => {
  onlyMatch(item, 'base64offset');
  const starts = [0, 2, 3];
  const ends = [0, -3, -2];
  return expandValues(item, (v) => {
    const bytes = bytesOf(v, 'base64offset');
    return [0, 1, 2].map((shift) => {
      const b64 = Buffer.concat([Buffer.alloc(shift, 0x20), bytes]).toString('base64');
      const end = ends[(bytes.length + shift) % 3]!;
      return { ...literal(b64.slice(starts[shift], end === 0 ? undefined : end), v), cased: true, binary: false };
    });
  });
};

const utf16 =
  (name: string, encode: (text: string) => Buffer): Modifier =>
  (item) => {
    onlyMatch(item, name);
    return mapValues(item, (v) => {
      const text = plainText(v);
      if (text === null) throw new SigmaSkip('unsupported_value', `the modifier "${name}" cannot encode the wildcards of "${v.original}"`);
      return { ...literal(encode(text).toString('latin1'), v), cased: true, binary: true };
    });
  };
/** `utf16le` (and its alias `wide`): the value as UTF-16 little-endian bytes. */
export const utf16le = utf16('utf16le', (t) => Buffer.from(t, 'utf16le'));
export const wide = utf16('wide', (t) => Buffer.from(t, 'utf16le'));
/** `utf16be`: the value as UTF-16 big-endian bytes. */
export const utf16be = utf16('utf16be', (t) => Buffer.from(t, 'utf16le').swap16());
/** `utf16`: a byte order mark, then UTF-16 little-endian. */
export const utf16bom = utf16('utf16', (t) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, 'utf16le')]));

// ---- Numeric modifiers ----

const numericModifier =
  (kind: 'gt' | 'gte' | 'lt' | 'lte'): Modifier =>
  (item) => {
    for (const v of item.raw) {
      const ok = typeof v === 'object' && v !== null ? true : typeof v === 'string' && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v);
      if (!ok) throw new SigmaSkip('invalid_value', `the modifier "${kind}" needs a number, got ${JSON.stringify(v)}`);
    }
    return { ...item, kind };
  };
/** `gt`: the field is greater than the value. */
export const gt = numericModifier('gt');
/** `gte`: the field is greater than or equal to the value. */
export const gte = numericModifier('gte');
/** `lt`: the field is less than the value. */
export const lt = numericModifier('lt');
/** `lte`: the field is less than or equal to the value. */
export const lte = numericModifier('lte');

// ---- IP modifiers ----

/** `cidr`: the value is a network range (IPv4 or IPv6) the field's address lies in. */
export const cidr: Modifier = (item) => {
  onlyMatch(item, 'cidr');
  return { ...item, kind: 'cidr' };
};

// ---- Specific modifiers ----

/** `fieldref`: the value names another field, whose value this field must equal. */
export const fieldref: Modifier = (item) => {
  onlyMatch(item, 'fieldref');
  return { ...item, kind: 'fieldref' };
};

/** `expand`: placeholders (`%Servers%`) filled from the environment, which this appliance does not define. */
export const expand: Modifier = (item) => {
  throw new SigmaSkip('unsupported_modifier', `placeholders (the modifier "expand", in ${item.raw.map((v) => JSON.stringify(v)).join(', ')}) need values defined for your environment, which feeds do not have`);
};

const timePart =
  (name: string): Modifier =>
  () => {
    throw new SigmaSkip('unsupported_modifier', `the time modifier "${name}" cannot be expressed in the query language`);
  };

export const MODIFIERS: Record<string, Modifier> = {
  contains,
  startswith,
  endswith,
  all,
  exists,
  cased,
  neq,
  windash,
  re,
  i,
  m,
  s,
  base64,
  base64offset,
  utf16le,
  utf16be,
  utf16: utf16bom,
  wide,
  gt,
  gte,
  lt,
  lte,
  cidr,
  fieldref,
  expand,
  minute: timePart('minute'),
  hour: timePart('hour'),
  day: timePart('day'),
  week: timePart('week'),
  month: timePart('month'),
  year: timePart('year'),
};

export function applyModifier(item: Item, name: string): Item {
  const mod = Object.prototype.hasOwnProperty.call(MODIFIERS, name) ? MODIFIERS[name] : undefined;
  if (!mod) throw new SigmaSkip('unsupported_modifier', `unknown modifier "${name}"`);
  return mod(item);
}

/** Whether a value is `*` alone (any value). */
export const onlyAny = (v: SigmaString): boolean => v.pieces.length === 1 && isAny(v.pieces[0]);
