// Shapes shared by every ingest endpoint. An endpoint turns its wire format into IncomingRecords
// and hands them to the pipeline (pipeline.ts), which parses, normalizes, stamps, spools and
// queues them. Endpoints never talk to storage.
import type { BigNumberText } from '../shared/exact-json.ts';

export type FieldValue = string | number | boolean | null | BigNumberText;

/** Structured fields, flattened: nested objects become dot-joined names ({"a":{"b":1}} → "a.b"). */
export type Fields = Record<string, FieldValue>;

/**
 * One record as an endpoint received it.
 * - `text` only: a line/document the token's parser reads (json, kv or syslog).
 * - `fields` given: already structured (OTLP); `text` is then the original record for `raw`.
 */
export interface IncomingRecord {
  text: string;
  fields?: Record<string, unknown>;
}

/** What happened to each record, in input order. */
export type RecordOutcome = { ok: true; logId: string } | { ok: false; error: string };

export interface AcceptResult {
  accepted: number;
  rejected: number;
  /** The first few reasons, each naming the record ("record 3: …"). */
  errors: string[];
  outcomes: RecordOutcome[];
  /** True once accepted records are on the fsync'd spool. */
  durable: boolean;
}
