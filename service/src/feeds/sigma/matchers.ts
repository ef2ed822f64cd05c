// A detection item, its modifiers applied, as a query-language condition. Values compare
// case-insensitively, as Sigma specifies, unless `cased` or an encoding made them exact; the
// language's own operators are used wherever they say the same thing:
//   `*x*` → f=~x   `x*` → f=^x   `*x` → f=$x   (all case-insensitive in the language)
//   x (no letters to fold) → f="x"    x (with letters) → f=/^x$/i    other wildcards → f=/^a.*b$/i
//   null → f!=*    `*` → f=*    re → f=/…/ (flags i, m, s)    cidr → cidr(f, "…")    gt… → f>n
// Values of one kind under "any of" share one comparison (f=~a,b,c; one regex alternation).
// Keyword items (no field) search the event's full text: "x", or a regex for inner wildcards.
import type { Condition } from '../../query/syntax/ast.ts';
import type { Item } from './modifiers.ts';
import { and, cidr as cidrCall, compare, not, numeric, or, present, regexCompare, regexSearch, search } from './query-ast.ts';
import { escapeRegex, re2Gap, slashSafe } from './regex.ts';
import { isLit, shapeOf, type Piece, type SigmaString } from './sigma-string.ts';
import { SigmaSkip } from './skip.ts';

/** Whether case folding changes the text: then a case-insensitive equality needs a regex. */
const hasCase = (t: string) => t.toLowerCase() !== t.toUpperCase();

function piecesRegex(pieces: Piece[]): string {
  return pieces.map((p) => (isLit(p) ? escapeRegex(p.lit) : 'any' in p ? '.*' : '.')).join('');
}

/** One value's condition on a field, or its regex body when it needs one (`re` true). */
type ValueMatch = { op: '=~' | '=^' | '=$' | '='; text: string } | { present: true } | { regex: string; cased: boolean };

function valueMatch(v: SigmaString): ValueMatch {
  const { openStart, openEnd, middle } = shapeOf(v);
  if (middle.length === 0) return openStart || openEnd ? { present: true } : { op: '=', text: '' };
  const lit = middle.length === 1 && isLit(middle[0]) ? middle[0].lit : null;
  if (lit !== null && !v.cased) {
    if (openStart && openEnd) return { op: '=~', text: lit };
    if (openEnd) return { op: '=^', text: lit };
    if (openStart) return { op: '=$', text: lit };
    if (!hasCase(lit)) return { op: '=', text: lit };
  }
  if (lit !== null && v.cased && !openStart && !openEnd) return { op: '=', text: lit };
  return { regex: `${openStart ? '' : '^'}${piecesRegex(middle)}${openEnd ? '' : '$'}`, cased: v.cased };
}

/** The conditions a field's values make, grouped so that values of one kind share a comparison. */
function anyOfValues(field: string, values: SigmaString[]): Condition[] {
  const lists = new Map<string, string[]>();
  const regexes = { cased: [] as string[], folded: [] as string[] };
  const out: Condition[] = [];
  for (const v of values) {
    const m = valueMatch(v);
    if ('present' in m) out.push(present(field, true));
    else if ('regex' in m) regexes[m.cased ? 'cased' : 'folded'].push(m.regex);
    else lists.set(m.op, [...(lists.get(m.op) ?? []), m.text]);
  }
  for (const [op, texts] of lists) out.push(compare(field, op as '=', [...new Set(texts)]));
  for (const [kind, bodies] of Object.entries(regexes)) {
    if (bodies.length === 0) continue;
    const body = bodies.length === 1 ? bodies[0]! : bodies.map((b) => `(?:${b})`).join('|');
    out.push(regexCompare(field, body, kind === 'cased' ? '' : 'i'));
  }
  return out;
}

/** A keyword: the value anywhere in the event's text. */
function keyword(v: SigmaString): Condition {
  const { middle } = shapeOf(v);
  const lit = middle.length === 1 && isLit(middle[0]) ? middle[0].lit : null;
  if (middle.length === 0) return search('');
  if (lit !== null && !v.cased) return search(lit);
  // A regex reads the stored text as it is: JSON records hold `\` and `"` escaped, so look for both spellings.
  const plain = piecesRegex(middle);
  const escaped = piecesRegex(middle.map((p) => (isLit(p) ? { lit: JSON.stringify(p.lit).slice(1, -1) } : p)));
  const flags = v.cased ? '' : 'i';
  return plain === escaped ? regexSearch(plain, flags) : or([regexSearch(plain, flags), regexSearch(escaped, flags)]);
}

/** The value of a raw item entry as text (numbers as written). */
function rawText(v: Item['raw'][number]): string {
  if (v === null) return '';
  if (typeof v === 'object') return v.text;
  return String(v);
}

function combine(item: Item, parts: Condition[]): Condition {
  const c = item.join === 'all' ? and(parts) : or(parts);
  return item.negate ? not(c) : c;
}

/** The condition of one item; `field` is the stored name (the Sigma name through the feed's normalizer). */
export function itemCondition(item: Item, field: string | null): Condition {
  if (field === null) {
    if (item.kind !== 'match') throw new SigmaSkip('unsupported_modifier', `keyword searches cannot use the modifier "${item.kind}"`);
    if (item.raw.some((v) => v === null)) throw new SigmaSkip('invalid_value', 'a keyword search cannot look for null');
    return combine(item, item.values.map((alts) => or(alts.map(keyword))));
  }
  switch (item.kind) {
    case 'match': {
      const nulls = item.raw.some((v) => v === null) ? [present(field, false)] : [];
      if (item.join === 'all') return combine(item, [...nulls, ...item.values.map((alts) => or(anyOfValues(field, alts)))]);
      return combine(item, [...nulls, ...anyOfValues(field, item.values.flat())]);
    }
    case 're':
      return combine(
        item,
        item.raw.map((v) => {
          const pattern = rawText(v);
          const gap = re2Gap(pattern);
          if (gap) throw new SigmaSkip('unsupported_regex', `the regular expression ${JSON.stringify(pattern)} uses ${gap}, which RE2 does not support`);
          const inline = item.reFlags.replace('i', '');
          return regexCompare(field, `${inline ? `(?${inline})` : ''}${slashSafe(pattern)}`, item.reFlags.includes('i') ? 'i' : '');
        }),
      );
    case 'cidr':
      return combine(
        item,
        item.raw.map((v) => {
          const range = rawText(v);
          if (!validCidr(range)) throw new SigmaSkip('invalid_value', `"${range}" is not a CIDR range`);
          return cidrCall(field, range);
        }),
      );
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = ({ gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[item.kind];
      return combine(item, item.raw.map((v) => numeric(field, op, rawText(v))));
    }
    case 'exists': {
      const c = present(field, item.raw[0] === true);
      return item.negate ? not(c) : c;
    }
    case 'fieldref':
      // Two fields are compared by the distance between their values (levenshtein(), computed
      // before the condition: translate.ts); only one fieldref per rule, so `_distance` is its.
      if (item.raw.length !== 1) throw new SigmaSkip('unsupported_value', 'fieldref with several fields cannot be translated');
      return combine(item, [and([compare('_distance', '=', ['0']), present(field, true)])]);
  }
}

function validCidr(range: string): boolean {
  const m = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(range);
  if (!m) return false;
  const bits = Number(m[2]);
  if (m[1]!.includes(':')) return bits <= 128;
  const parts = m[1]!.split('.');
  return bits <= 32 && parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}
