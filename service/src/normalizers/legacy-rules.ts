// Before normalizers existed, each ingest token carried its own rule list (`normalizers`:
// rename, copy, case, value_map) and a `normalization` flag for built-in aliases. Those lists move
// into normalizers: the SQLite migration turns every token's list into a normalizer of its own,
// and a token created or edited with a rule list still gets one. This file is that conversion.
//
// The old rules ran as: built-in alias (matched ignoring case and punctuation), then the rename
// and case rules in order, then copies, then value maps. A normalizer runs transforms, then field
// mappings, then value mappings. So: the case rules become the transforms, in order; every name
// the old rules renamed (each rename's `from`, each spelling of a built-in alias) becomes a field
// mapping from that name as it arrives onto exactly what the old rules made of it (mappings match
// arriving names); copies and value maps become value mappings, in their order.
import type { FieldMapping, NormalizerDefinition, Transform, ValueMapping } from './definition.ts';
import { NAME_TRANSFORMS } from './transforms.ts';

export type LegacyRule =
  | { type: 'rename'; from: string; to: string }
  | { type: 'copy'; from: string; to: string }
  | { type: 'case'; style: 'snake' | 'camel' | 'lower' | 'kebab' }
  | { type: 'value_map'; field: string; values: Record<string, string> };

const RULE_TYPES = ['rename', 'copy', 'case', 'value_map'] as const;
const CASE_STYLES = ['snake', 'camel', 'lower', 'kebab'] as const;
const CASE_TRANSFORM: Record<(typeof CASE_STYLES)[number], Transform> = {
  snake: 'snake_case',
  camel: 'camel_case',
  lower: 'lowercase',
  kebab: 'kebab_case',
};

/** The old built-in aliases: the words of a name (matched ignoring case and punctuation) → its target. */
export const BUILTIN_ALIASES: Array<[string[], string]> = [
  [['source', 'ip'], 'src_ip'],
  [['src', 'ip'], 'src_ip'],
  [['src', 'addr'], 'src_ip'],
  [['source', 'address'], 'src_ip'],
  [['client', 'ip'], 'src_ip'],
  [['destination', 'ip'], 'dst_ip'],
  [['dst', 'ip'], 'dst_ip'],
  [['dest', 'ip'], 'dst_ip'],
  [['dst', 'addr'], 'dst_ip'],
  [['destination', 'address'], 'dst_ip'],
  [['source', 'port'], 'src_port'],
  [['src', 'port'], 'src_port'],
  [['client', 'port'], 'src_port'],
  [['destination', 'port'], 'dst_port'],
  [['dst', 'port'], 'dst_port'],
  [['dest', 'port'], 'dst_port'],
];

const squash = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
const BUILTIN_BY_SQUASH = new Map(BUILTIN_ALIASES.map(([ws, target]) => [ws.join(''), target]));

/** The ways shippers spell an alias's words: sourceip, source_ip, source.ip, source-ip, sourceIp, SourceIp, SourceIP, SOURCE_IP, … */
export function spellings(ws: string[]): string[] {
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  const up = (w: string) => w.toUpperCase();
  const last = ws.length - 1;
  const forms = [
    ws.join(''),
    ws.join('_'),
    ws.join('.'),
    ws.join('-'),
    ws[0] + ws.slice(1).map(cap).join(''),
    ws.map(cap).join(''),
    ws.slice(0, last).map(cap).join('') + up(ws[last]!),
    ws[0] + ws.slice(1, last).map(cap).join('') + up(ws[last]!),
    ws.map(up).join('_'),
    ws.map(up).join(''),
    ws.map(cap).join('-'),
    ws.slice(0, last).map(cap).join('-') + '-' + up(ws[last]!),
  ];
  return [...new Set(forms)];
}

/** What the old rules made of one name (their exact algorithm, kept for the conversion). */
function oldName(name: string, builtin: boolean, rules: LegacyRule[]): string {
  let out = name;
  if (builtin) out = BUILTIN_BY_SQUASH.get(squash(out)) ?? out;
  for (const r of rules) {
    if (r.type === 'rename' && out === r.from) out = r.to;
    else if (r.type === 'case') out = NAME_TRANSFORMS[CASE_TRANSFORM[r.style]](out);
  }
  return out;
}

/** The normalizer that does what a token's `normalization` flag and rule list did. */
export function definitionFromRules(builtin: boolean, rules: LegacyRule[]): NormalizerDefinition {
  const transforms = rules.flatMap((r) => (r.type === 'case' ? [CASE_TRANSFORM[r.style]] : []));
  const candidates = rules.flatMap((r) => (r.type === 'rename' ? [r.from] : []));
  if (builtin) for (const [ws] of BUILTIN_ALIASES) candidates.push(...spellings(ws));
  const byTarget = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const name of candidates) {
    if (seen.has(name)) continue;
    seen.add(name);
    const target = oldName(name, builtin, rules);
    let plain = name;
    for (const t of transforms) plain = NAME_TRANSFORMS[t](plain);
    if (target === plain) continue;
    byTarget.set(target, [...(byTarget.get(target) ?? []), name]);
  }
  const field_mappings: FieldMapping[] = [...byTarget].map(([target, sources]) => ({ sources, target }));
  const value_mappings: ValueMapping[] = rules.flatMap((r): ValueMapping[] => {
    if (r.type === 'copy') return [{ from_field: r.from, to_field: r.to }];
    if (r.type === 'value_map') return [{ from_field: r.field, to_field: r.field, map: r.values }];
    return [];
  });
  return { transforms, field_mappings, value_mappings, timestamp_fields: [] };
}

const isName = (v: unknown) => typeof v === 'string' && v.trim().length > 0 && v.length <= 500;

/** A sentence naming the first bad rule of a token's rule list (`normalizers`), or null. */
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
        if (!CASE_STYLES.includes(r.style as never)) return `The field "${at}.style" must be one of ${CASE_STYLES.join(', ')}.`;
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
