// A normalizer definition made ready for the ingest hot path and for Sigma translation.
//
// For a record's flattened fields, in this order (conventions.md "Normalizers"):
//   1. every name goes through the transforms, then the field mappings (a source matches the name
//      as it arrived or as the transforms left it, so `HOST` can mean syslog-ng's host even where
//      `lowercase` runs); the result per name is memoised, since shippers repeat the same few
//      names millions of times, and a record whose names all stay is passed on untouched (its
//      text can then stand for its fields: ingest/verbatim.ts);
//   2. the value mappings, in order, on the renamed fields.
// When several fields land on one name, a field that already had that name keeps it, else the
// first in document order; the others keep their names without flatten_leaf and mappings (so two
// `Name` leaves stay `Provider.Name` and `Data.Name`), and nothing is dropped.
import type { FieldValue, Fields } from '../ingest/types.ts';
import { BigNumberText, setOwn } from '../shared/exact-json.ts';
import type { NormalizerDefinition } from './definition.ts';
import { NAME_TRANSFORMS } from './transforms.ts';

export interface CompiledNormalizer {
  /** The normalized fields: the argument itself when nothing changes, else a new object. */
  apply(fields: Fields): Fields;
  /** The same, telling where each stored field came from (for the editor's preview). */
  trace(fields: Fields): { fields: Fields; origins: Map<string, FieldOrigin> };
  /** The name a field called `name` is stored under (Sigma field names go through this). */
  fieldName(name: string): string;
  /** Checked for the log's time after the token's own timestamp fields. */
  timestampFields: string[];
}

/** A stored field's origin: the field it was named before, or the value mapping that set it. */
export type FieldOrigin = { field: string } | { valueMapping: number; from: string };

interface NameEntry {
  /** The name after transforms and mappings. */
  name: string;
  /** Where the field goes when another field holds `name`: the transforms without flatten_leaf. */
  fallback: string;
}

const MEMO_LIMIT = 100_000;
const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** A value as the text value mappings compare. */
function valueText(v: FieldValue): string {
  return v instanceof BigNumberText ? v.text : String(v);
}

export function compileNormalizer(def: NormalizerDefinition): CompiledNormalizer {
  const steps = def.transforms.map((t) => NAME_TRANSFORMS[t]);
  const fallbackSteps = def.transforms.filter((t) => t !== 'flatten_leaf').map((t) => NAME_TRANSFORMS[t]);
  const targets = new Map<string, string>();
  for (const m of def.field_mappings) for (const s of m.sources) if (!targets.has(s)) targets.set(s, m.target);
  const valueMaps = def.value_mappings.map((v) => ({
    from: v.from_field,
    to: v.to_field,
    map: v.map && Object.keys(v.map).length > 0 ? v.map : null,
  }));
  const renames = steps.length > 0 || targets.size > 0;

  let memo = new Map<string, NameEntry>();
  const entry = (name: string): NameEntry => {
    let e = memo.get(name);
    if (e !== undefined) return e;
    let out = name;
    for (const f of steps) out = f(out);
    out = targets.get(name) ?? targets.get(out) ?? out;
    let fallback = name;
    for (const f of fallbackSteps) fallback = f(fallback);
    e = { name: out, fallback };
    if (memo.size >= MEMO_LIMIT) memo = new Map(); // a hostile stream of unique names cannot grow it forever
    memo.set(name, e);
    return e;
  };

  type Note = (origin: FieldOrigin, name: string) => void;
  const rename = (fields: Fields, note?: Note): Fields => {
    let changed = false;
    for (const k in fields) {
      if (entry(k).name !== k) {
        changed = true;
        break;
      }
    }
    if (!changed) {
      if (note) for (const k in fields) note({ field: k }, k);
      return fields;
    }
    const out: Fields = {};
    // A name is free for field k unless taken, or held by a field that keeps it (which wins).
    const free = (n: string, k: string) => !hasOwn(out, n) && (n === k || !hasOwn(fields, n) || entry(n).name !== n);
    for (const k in fields) {
      const e = entry(k);
      const n = free(e.name, k) ? e.name : free(e.fallback, k) ? e.fallback : free(k, k) ? k : null;
      if (n !== null) {
        setOwn(out, n, fields[k]!);
        note?.({ field: k }, n);
      }
    }
    return out;
  };

  const run = (fields: Fields, note?: Note): Fields => {
    let out = renames ? rename(fields, note) : fields;
    if (!renames && note) for (const k in fields) note({ field: k }, k);
    for (let i = 0; i < valueMaps.length; i++) {
      const m = valueMaps[i]!;
      if (!hasOwn(out, m.from)) continue;
      const v = out[m.from]!;
      let next: FieldValue | undefined;
      if (m.map === null) next = v;
      else if (v !== null) {
        const key = valueText(v);
        if (hasOwn(m.map, key)) next = m.map[key]!;
      }
      if (next === undefined) continue;
      if (out === fields) out = { ...fields };
      setOwn(out, m.to, next);
      note?.({ valueMapping: i, from: m.from }, m.to);
    }
    return out;
  };

  return {
    apply: (fields) => run(fields),
    trace(fields) {
      const origins = new Map<string, FieldOrigin>();
      return { fields: run(fields, (o, name) => origins.set(name, o)), origins };
    },
    fieldName: (name) => entry(name).name,
    timestampFields: def.timestamp_fields,
  };
}
