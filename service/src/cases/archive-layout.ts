// What a case archive holds and where (docs/evidence.md "Case archive"): one file per kind of
// record, the events as NDJSON parts by day, and a manifest of every file's size and SHA-256
// written last, with the manifest's own hash beside it in `sha256sum` format.

/** Bumped when the layout changes in a way an older importer could not read. */
export const CASE_FORMAT = 'svc-case/1';

export const MANIFEST = 'manifest.json';
export const MANIFEST_HASH = 'manifest.sha256';
export const CASE_INFO = 'case.json';
export const COMMENTS = 'comments.ndjson';
export const NOTEBOOKS = 'notebooks.ndjson';
export const DASHBOARDS = 'dashboards.ndjson';
export const ALERTS = 'alerts.ndjson';
export const ALERT_EXECUTIONS = 'alert-executions.ndjson';
/** Optional: archives written before dictionaries were carried do not have it. */
export const DICTIONARIES = 'dictionaries.ndjson';
export const CUSTODY = 'custody.ndjson';

/** An events part holds at most this many bytes (the writer keeps one part in memory). */
export const EVENTS_PART_BYTES = 8 * 1024 * 1024;

/** `events/2024-03-01/0001.ndjson`: the UTC day of the events' time, then the part's number. */
export const eventsPart = (day: string, n: number): string => `events/${day}/${String(n).padStart(4, '0')}.ndjson`;
export const EVENTS_PART = /^events\/\d{4}-\d{2}-\d{2}\/\d{4,}\.ndjson$/;

/** Every name a case archive may hold besides the events parts. */
export const RECORD_FILES = [CASE_INFO, COMMENTS, NOTEBOOKS, DASHBOARDS, ALERTS, ALERT_EXECUTIONS, DICTIONARIES, CUSTODY] as const;

export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: string;
  created_at: string;
  /** The exported fractal (name and id on the appliance it came from). */
  fractal: { id: string; name: string };
  event_count: number;
  files: ManifestEntry[];
}

/** One event line of an events part: every stored column but the fractal (which the import sets). */
export interface CaseEvent {
  log_id: string;
  /** DateTime64(9) text, UTC ("2024-03-01 12:00:00.123456789"): the stored time to the nanosecond. */
  timestamp: string;
  ingest_timestamp: string;
  raw: string;
  /** The fields as ingest made them ('' when `raw` is that text). */
  fields_text: string;
}

/** `case.json`: what the case is and where it came from. */
export interface CaseInfo {
  format: string;
  exported_at: string;
  exported_by: string;
  appliance_version: string;
  fractal: { id: string; name: string; description: string; retention_days: number | null };
}

/**
 * A line of `dictionaries.ndjson`: a dictionary's definition as stored, without the ids that mean
 * nothing elsewhere (its own, its owner's, its row generation), and its first rows; a dictionary
 * with more rows than one line holds (case-dictionaries.ts) goes on in `{rows}` lines right after it.
 */
export interface CaseDictionary {
  dictionary: {
    name: string;
    description: string;
    /** Whose it was where it came from; the importing appliance makes it the new fractal's either way. */
    scope: 'fractal' | 'global';
    columns: string[];
    key_columns: string[];
    created_by: string;
    created_at: string;
    updated_at: string;
  };
  rows: Array<Record<string, string>>;
}

