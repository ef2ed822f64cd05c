// Field-name normalization per ingest token, so the same thing from different shippers lands on
// one name and alert rules, saved queries and dashboards work whatever the source.
//
// Applied in this order to a record's flattened fields:
//   1. names: the built-in aliases (when the token's `normalization` is on), then the token's
//      `rename` and `case` rules in their order; the mapping of each name is memoised, since
//      shippers repeat the same few names millions of times;
//   2. `copy` rules, in order;
//   3. `value_map` rules, in order.
import type { NormalizerRule } from './normalizer-rules.ts';
import type { Fields } from './types.ts';

/** Built-in aliases, keyed by the name lower-cased with every non-alphanumeric removed. */
const BUILTIN_ALIASES: Record<string, string> = {
  sourceip: 'src_ip',
  srcip: 'src_ip',
  srcaddr: 'src_ip',
  sourceaddress: 'src_ip',
  clientip: 'src_ip',
  destinationip: 'dst_ip',
  dstip: 'dst_ip',
  destip: 'dst_ip',
  dstaddr: 'dst_ip',
  destinationaddress: 'dst_ip',
  sourceport: 'src_port',
  srcport: 'src_port',
  clientport: 'src_port',
  destinationport: 'dst_port',
  dstport: 'dst_port',
  destport: 'dst_port',
};

const squash = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

function changeCase(name: string, style: 'snake' | 'camel' | 'lower' | 'kebab'): string {
  // Dots separate nesting levels and are kept; each level is restyled on its own.
  return name
    .split('.')
    .map((seg) => {
      if (style === 'lower') return seg.toLowerCase();
      const words = seg
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
        .split(/[\s_-]+/)
        .filter(Boolean)
        .map((w) => w.toLowerCase());
      if (words.length === 0) return seg;
      if (style === 'snake') return words.join('_');
      if (style === 'kebab') return words.join('-');
      return words[0] + words.slice(1).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
    })
    .join('.');
}

/** Returns its argument unchanged when no rule applies, else a new object (the input is never changed). */
export type Normalizer = (fields: Fields) => Fields;

function allUnchanged(fields: Fields, mapName: (name: string) => string): boolean {
  for (const k in fields) if (mapName(k) !== k) return false;
  return true;
}

const identity: Normalizer = (f) => f;

export function compileNormalizer(builtin: boolean, rules: NormalizerRule[]): Normalizer {
  const nameRules = rules.filter((r) => r.type === 'rename' || r.type === 'case');
  const copies = rules.filter((r): r is Extract<NormalizerRule, { type: 'copy' }> => r.type === 'copy');
  const valueMaps = rules.filter((r): r is Extract<NormalizerRule, { type: 'value_map' }> => r.type === 'value_map');
  if (!builtin && rules.length === 0) return identity;

  const memo = new Map<string, string>();
  const mapName = (name: string): string => {
    let out = memo.get(name);
    if (out !== undefined) return out;
    out = name;
    if (builtin) out = BUILTIN_ALIASES[squash(out)] ?? out;
    for (const r of nameRules) {
      if (r.type === 'rename') {
        if (out === r.from) out = r.to;
      } else if (r.type === 'case') out = changeCase(out, r.style);
    }
    if (memo.size < 100_000) memo.set(name, out);
    return out;
  };

  const mutates = copies.length > 0 || valueMaps.length > 0;
  return (fields) => {
    let out: Fields = fields;
    // Most records only carry names that map to themselves: then nothing is copied.
    if ((builtin || nameRules.length > 0) && !allUnchanged(fields, mapName)) {
      out = {};
      for (const k in fields) {
        const n = mapName(k);
        // An explicitly named canonical field wins over an alias that maps onto it.
        if (n !== k && n in fields && n in out) continue;
        out[n] = fields[k]!;
      }
    }
    if (mutates && out === fields) out = { ...fields };
    for (const c of copies) if (c.from in out) out[c.to] = out[c.from]!;
    for (const m of valueMaps) {
      const v = out[m.field];
      if (v !== undefined && v !== null) {
        const key = String(v);
        if (Object.prototype.hasOwnProperty.call(m.values, key)) out[m.field] = m.values[key]!;
      }
    }
    return out;
  };
}
