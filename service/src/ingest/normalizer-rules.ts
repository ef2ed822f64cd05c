// Field-name normalizer rules configured per ingest token. The pipeline that applies them is in
// the ingest domain; here is their shape and validation, so a bad rule is refused when saved.
export type NormalizerRule =
  | { type: 'rename'; from: string; to: string }
  | { type: 'copy'; from: string; to: string }
  | { type: 'case'; style: 'snake' | 'camel' | 'lower' | 'kebab' }
  | { type: 'value_map'; field: string; values: Record<string, string> };

const RULE_TYPES = ['rename', 'copy', 'case', 'value_map'] as const;
const CASE_STYLES = ['snake', 'camel', 'lower', 'kebab'];

const isName = (v: unknown) => typeof v === 'string' && v.trim().length > 0 && v.length <= 500;

/** A sentence naming the first bad rule, or null when all are valid. */
export function ruleProblem(rules: unknown[]): string | null {
  for (const [i, raw] of rules.entries()) {
    const r = raw as Record<string, unknown>;
    const at = `normalizers[${i}]`;
    switch (r.type) {
      case 'rename':
      case 'copy':
        if (!isName(r.from)) return `The field "${at}.from" must be a non-empty field name.`;
        if (!isName(r.to)) return `The field "${at}.to" must be a non-empty field name.`;
        break;
      case 'case':
        if (!CASE_STYLES.includes(r.style as string)) return `The field "${at}.style" must be one of ${CASE_STYLES.join(', ')}.`;
        break;
      case 'value_map':
        if (!isName(r.field)) return `The field "${at}.field" must be a non-empty field name.`;
        if (!r.values || typeof r.values !== 'object' || Array.isArray(r.values) || Object.values(r.values).some((v) => typeof v !== 'string')) {
          return `The field "${at}.values" must be an object mapping values to replacement strings.`;
        }
        break;
      default:
        return `The field "${at}.type" must be one of ${RULE_TYPES.join(', ')}.`;
    }
  }
  return null;
}
