// Normalizers (conventions.md "Normalizers"): the calls of /api/v1/normalizers and the pure helpers
// behind the Normalizers page and the token form's picker (unit-tested in tests/ui/normalizers.test.ts).
// Every call throws ApiError with the service's own sentence.
import { del, enc, get, post, put, type Id } from './api.ts';
import { WINDOWS_NORMALIZER_NAME } from '../../../service/src/normalizers/shipped-names.ts';

export const TRANSFORMS = ['flatten_leaf', 'dedot', 'snake_case', 'camel_case', 'pascal_case', 'kebab_case', 'lowercase', 'uppercase'] as const;
export type Transform = (typeof TRANSFORMS)[number];

/** What each transform does to a name, shown next to it. */
export const TRANSFORM_HELP: Record<Transform, string> = {
  flatten_leaf: 'Event.EventData.Image → Image',
  dedot: 'a.b → a_b',
  snake_case: 'UserID → user_id',
  camel_case: 'user_id → userId',
  pascal_case: 'user_id → UserId',
  kebab_case: 'UserID → user-id',
  lowercase: 'EventID → eventid',
  uppercase: 'event_id → EVENT_ID',
};

export interface FieldMapping {
  sources: string[];
  target: string;
}

export interface ValueMapping {
  from_field: string;
  to_field: string;
  map?: Record<string, string>;
}

export interface NormalizerDefinition {
  transforms: Transform[];
  field_mappings: FieldMapping[];
  value_mappings: ValueMapping[];
  timestamp_fields: string[];
}

export interface Normalizer extends NormalizerDefinition {
  id: string;
  name: string;
  description: string;
  is_default: boolean;
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  used_by: { ingest_tokens: Array<{ id: string; name: string; fractal_id: string; fractal_name: string }>; feeds: Array<{ id: string; name: string }> };
}

export type NormalizerInput = NormalizerDefinition & { name: string; description: string; is_default?: boolean };

export type FieldOrigin = { field: string } | { valueMapping: number; from: string };

export interface Preview {
  fields: Array<{ name: string; value: unknown; origin: FieldOrigin | null }>;
  timestamp: { field: string | null; time: string | null };
}

export const normalizers = {
  list: () => get<Normalizer[]>('/normalizers'),
  get: (id: Id) => get<Normalizer>(`/normalizers/${enc(id)}`),
  create: (body: NormalizerInput) => post<Normalizer>('/normalizers', body),
  update: (id: Id, body: Partial<NormalizerInput>) => put<Normalizer>(`/normalizers/${enc(id)}`, body),
  remove: (id: Id) => del<{ deleted: boolean }>(`/normalizers/${enc(id)}`),
  preview: (body: NormalizerDefinition & { record: string; parser_type?: 'json' | 'kv' | 'syslog' }) => post<Preview>('/normalizers/preview', body),
};

/** The token form's choice of normalizer: the default, none, or one by id. */
export type NormalizerChoice = 'default' | 'none' | string;

export function choiceOf(t: { normalization: boolean; normalizer_id: string | null } | null): NormalizerChoice {
  if (!t) return 'default';
  if (!t.normalization) return 'none';
  return t.normalizer_id ?? 'default';
}

/** The token fields a choice stands for. */
export function tokenFieldsOf(choice: NormalizerChoice): { normalization: boolean; normalizer_id: string | null } {
  if (choice === 'none') return { normalization: false, normalizer_id: null };
  if (choice === 'default') return { normalization: true, normalizer_id: null };
  return { normalization: true, normalizer_id: choice };
}

/** Where a previewed field came from, as a person reads it: "from Event.System.EventID", "value mapping 1 of EventID". */
export function describeOrigin(name: string, o: FieldOrigin | null): string {
  if (!o) return '';
  if ('field' in o) return o.field === name ? 'as it arrived' : `from ${o.field}`;
  return `value mapping ${o.valueMapping + 1}, from ${o.from}`;
}

/** Sources typed as a comma-separated list. */
export function parseSources(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The shipped Windows event log normalizer in a list, found by its name (renamed or deleted: none). */
export function shippedWindowsNormalizer<T extends { name: string }>(list: T[]): T | null {
  return list.find((n) => n.name === WINDOWS_NORMALIZER_NAME) ?? null;
}
