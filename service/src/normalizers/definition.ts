// What a normalizer is (conventions.md "Normalizers"): a named set of field-name rules that an
// ingest token applies to every record and a feed applies to every Sigma field name, so both land
// on the same names. Here: its shape and the sentence naming the first thing wrong with one.

/** Name transforms, applied to every field name in order (transforms.ts has one function each). */
export const TRANSFORMS = ['flatten_leaf', 'dedot', 'snake_case', 'camel_case', 'pascal_case', 'kebab_case', 'lowercase', 'uppercase'] as const;
export type Transform = (typeof TRANSFORMS)[number];

/** Fields named any of `sources` are renamed `target`. */
export interface FieldMapping {
  sources: string[];
  target: string;
}

/**
 * Sets `to_field` from the value of `from_field` (compared as text), looked up in `map`; a value
 * not in the map leaves `to_field` alone. Without entries in `map` the value is copied as it is.
 */
export interface ValueMapping {
  from_field: string;
  to_field: string;
  map?: Record<string, string>;
}

export interface NormalizerDefinition {
  transforms: Transform[];
  field_mappings: FieldMapping[];
  value_mappings: ValueMapping[];
  /** Field names (as the normalizer leaves them) checked for the log's time, after the token's own. */
  timestamp_fields: string[];
}

export const MAX_FIELD_NAME = 500;
const isFieldName = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0 && v.length <= MAX_FIELD_NAME;

/** The sentence naming the first problem of a definition, or null when it is valid. */
export function definitionProblem(d: NormalizerDefinition): string | null {
  for (const [i, t] of d.transforms.entries()) {
    if (!TRANSFORMS.includes(t)) return `The field "transforms[${i}]" must be one of ${TRANSFORMS.join(', ')}.`;
  }
  if (d.transforms.includes('flatten_leaf') && d.transforms.includes('dedot')) {
    return 'The field "transforms" cannot hold both flatten_leaf and dedot: after flatten_leaf no name has a dot left to replace.';
  }
  for (const [i, m] of d.field_mappings.entries()) {
    const at = `field_mappings[${i}]`;
    if (!Array.isArray(m.sources) || m.sources.length === 0) return `The field "${at}.sources" must list at least one field name.`;
    const bad = m.sources.findIndex((s) => !isFieldName(s));
    if (bad >= 0) return `The field "${at}.sources[${bad}]" must be a non-empty field name of at most ${MAX_FIELD_NAME} characters.`;
    if (!isFieldName(m.target)) return `The field "${at}.target" must be a non-empty field name of at most ${MAX_FIELD_NAME} characters.`;
  }
  for (const [i, v] of d.value_mappings.entries()) {
    const at = `value_mappings[${i}]`;
    if (!isFieldName(v.from_field)) return `The field "${at}.from_field" must be a non-empty field name.`;
    if (!isFieldName(v.to_field)) return `The field "${at}.to_field" must be a non-empty field name.`;
    if (v.map !== undefined && (v.map === null || typeof v.map !== 'object' || Array.isArray(v.map) || Object.values(v.map).some((x) => typeof x !== 'string'))) {
      return `The field "${at}.map" must be an object mapping values to replacement text.`;
    }
  }
  const bad = d.timestamp_fields.findIndex((f) => !isFieldName(f));
  if (bad >= 0) return `The field "timestamp_fields[${bad}]" must be a non-empty field name.`;
  return null;
}
