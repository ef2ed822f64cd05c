// "Paste a sample record, see the normalized fields": the record goes through the same parser,
// flattening, normalizer and timestamp precedence as an ingested one, and the answer says where
// each stored field came from, so the editor's preview never disagrees with ingest.
import { flatten } from '../ingest/flatten.ts';
import { parseJsonRecord } from '../ingest/parsers/json.ts';
import { parseKv } from '../ingest/parsers/kv.ts';
import { ParseError } from '../ingest/parsers/parse-error.ts';
import { parseSyslog } from '../ingest/parsers/syslog.ts';
import { resolveTimestamp } from '../ingest/timestamps.ts';
import type { ParserType } from '../ingest/tokens-store.ts';
import type { FieldValue } from '../ingest/types.ts';
import { compileNormalizer, type FieldOrigin } from './compile.ts';
import type { NormalizerDefinition } from './definition.ts';

export interface Preview {
  /** The stored fields in order, each with its origin (a field as parsed, or a value mapping). */
  fields: Array<{ name: string; value: FieldValue; origin: FieldOrigin | null }>;
  /** The field the log's time is read from (null: the ingestion time), and that time in RFC 3339. */
  timestamp: { field: string | null; time: string | null };
}

/** A sample that the chosen parser cannot read; its message is the sentence to show. */
export class PreviewError extends Error {}

const PARSERS = { json: parseJsonRecord, kv: parseKv, syslog: parseSyslog } as const;

export function previewRecord(
  text: string,
  parser: ParserType,
  def: NormalizerDefinition,
  timestampFields: { token: string[]; settings: string[] },
): Preview {
  const record = text.trim();
  let parsed: Record<string, unknown>;
  try {
    parsed = parser !== 'json' && record.charCodeAt(0) !== 0x7b ? PARSERS[parser](record) : parseJsonRecord(record);
  } catch (err) {
    if (err instanceof ParseError) throw new PreviewError(`The sample record cannot be read as ${parser}: ${err.message}.`);
    throw err;
  }
  const n = compileNormalizer(def);
  const { fields, origins } = n.trace(flatten(parsed));
  const ts = resolveTimestamp(fields, [...timestampFields.token, ...n.timestampFields], timestampFields.settings);
  return {
    fields: Object.entries(fields).map(([name, value]) => ({ name, value, origin: origins.get(name) ?? null })),
    timestamp: { field: ts.field, time: ts.field === null ? null : new Date(Number(ts.ns / 1_000_000n)).toISOString() },
  };
}
