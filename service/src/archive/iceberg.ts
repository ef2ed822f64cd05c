// Apache Iceberg table metadata (format version 2) for one fractal's archive table: the metadata
// JSON, the manifest list of a snapshot and the manifests (Avro), written by us because the
// engine's own Iceberg writer is experimental, names files at random (no idempotent commit) and
// deletes rows with delete files rather than dropping partitions (docs/archive.md, "Measured").
//
// Layout under the table's location: data/ingest_day=YYYY-MM-DD/<file>.parquet,
// metadata/v<N>.metadata.json (+ version-hint.text), metadata/snap-<id>.avro (manifest lists),
// metadata/m-<day>-<snapshot>.avro (one manifest per ingest day, rewritten when the day changes).
import { avroContainer, type AvroSchema } from './avro.ts';

/** The columns of an archived log. Parquet files carry the same names (no field ids: name mapping). */
export const ICEBERG_SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    // Ids as text: the engine writes Parquet UUID statistics in an order readers reject ("min_value >
    // max_value") or could prune wrongly with; strings order the same for every reader.
    { id: 1, name: 'fractal_id', required: true, type: 'string' },
    { id: 2, name: 'log_id', required: true, type: 'string' },
    { id: 3, name: 'timestamp', required: true, type: 'timestamptz' },
    { id: 4, name: 'ingest_timestamp', required: true, type: 'timestamptz' },
    // Iceberg v2 times are microseconds; the appliance keeps nanoseconds, restored exactly from these.
    { id: 5, name: 'timestamp_ns', required: true, type: 'long' },
    { id: 6, name: 'ingest_timestamp_ns', required: true, type: 'long' },
    { id: 7, name: 'raw', required: true, type: 'string' },
    // The record's fields as JSON text when they differ from `raw` (flattened, renamed), else ''.
    { id: 8, name: 'fields', required: true, type: 'string' },
  ],
} as const;

/** The archived Parquet columns as the engine's table functions are told to read them. */
export const ARCHIVE_STRUCTURE =
  "fractal_id String, log_id String, timestamp DateTime64(6, 'UTC'), ingest_timestamp DateTime64(6, 'UTC'), timestamp_ns Int64, ingest_timestamp_ns Int64, raw String, fields String";

export const PARTITION_FIELD_ID = 1000;
const PARTITION_SPEC = [{ 'source-id': 4, 'field-id': PARTITION_FIELD_ID, name: 'ingest_day', transform: 'day' }];

const DATE = { type: 'int', logicalType: 'date' } as const;

const MANIFEST_ENTRY: AvroSchema = {
  type: 'record',
  name: 'manifest_entry',
  fields: [
    { name: 'status', type: 'int', 'field-id': 0 },
    { name: 'snapshot_id', type: ['null', 'long'], default: null, 'field-id': 1 },
    { name: 'sequence_number', type: ['null', 'long'], default: null, 'field-id': 3 },
    { name: 'file_sequence_number', type: ['null', 'long'], default: null, 'field-id': 4 },
    {
      name: 'data_file',
      'field-id': 2,
      type: {
        type: 'record',
        name: 'r2',
        fields: [
          { name: 'content', type: 'int', 'field-id': 134 },
          { name: 'file_path', type: 'string', 'field-id': 100 },
          { name: 'file_format', type: 'string', 'field-id': 101 },
          {
            name: 'partition',
            'field-id': 102,
            type: { type: 'record', name: 'r102', fields: [{ name: 'ingest_day', type: ['null', DATE], default: null, 'field-id': PARTITION_FIELD_ID }] },
          },
          { name: 'record_count', type: 'long', 'field-id': 103 },
          { name: 'file_size_in_bytes', type: 'long', 'field-id': 104 },
          { name: 'lower_bounds', type: ['null', boundsMap('k126_v127', 126, 127)], default: null, 'field-id': 125 },
          { name: 'upper_bounds', type: ['null', boundsMap('k129_v130', 129, 130)], default: null, 'field-id': 128 },
        ],
      },
    },
  ],
};

function boundsMap(name: string, keyId: number, valueId: number): AvroSchema {
  return {
    type: 'array',
    logicalType: 'map',
    items: { type: 'record', name, fields: [{ name: 'key', type: 'int', 'field-id': keyId }, { name: 'value', type: 'bytes', 'field-id': valueId }] },
  };
}

const MANIFEST_FILE: AvroSchema = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    { name: 'manifest_path', type: 'string', 'field-id': 500 },
    { name: 'manifest_length', type: 'long', 'field-id': 501 },
    { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
    { name: 'content', type: 'int', 'field-id': 517 },
    { name: 'sequence_number', type: 'long', 'field-id': 515 },
    { name: 'min_sequence_number', type: 'long', 'field-id': 516 },
    { name: 'added_snapshot_id', type: 'long', 'field-id': 503 },
    { name: 'added_files_count', type: 'int', 'field-id': 504 },
    { name: 'existing_files_count', type: 'int', 'field-id': 505 },
    { name: 'deleted_files_count', type: 'int', 'field-id': 506 },
    { name: 'added_rows_count', type: 'long', 'field-id': 512 },
    { name: 'existing_rows_count', type: 'long', 'field-id': 513 },
    { name: 'deleted_rows_count', type: 'long', 'field-id': 514 },
    {
      name: 'partitions',
      type: [
        'null',
        {
          type: 'array',
          'element-id': 508,
          items: {
            type: 'record',
            name: 'r508',
            fields: [
              { name: 'contains_null', type: 'boolean', 'field-id': 509 },
              { name: 'contains_nan', type: ['null', 'boolean'], default: null, 'field-id': 518 },
              { name: 'lower_bound', type: ['null', 'bytes'], default: null, 'field-id': 510 },
              { name: 'upper_bound', type: ['null', 'bytes'], default: null, 'field-id': 511 },
            ],
          },
        },
      ],
      default: null,
      'field-id': 507,
    },
  ],
};

/** A data file as the archive's catalog (SQLite) records it. */
export interface ArchivedFile {
  /** The file's key below the table's location: data/ingest_day=…/….parquet */
  key: string;
  day: string;
  rows: number;
  bytes: number;
  /** Smallest and largest `timestamp` in the file, microseconds since the epoch. */
  minTsUs: number;
  maxTsUs: number;
  snapshotId: number;
  sequenceNumber: number;
}

export interface SnapshotRecord {
  snapshotId: number;
  parentId: number | null;
  sequenceNumber: number;
  timestampMs: number;
  /** Key of its manifest list below the table location. */
  manifestList: string;
  summary: Record<string, string>;
}

export interface ManifestRecord {
  key: string;
  day: string;
  bytes: number;
  snapshotId: number;
  sequenceNumber: number;
  minSequenceNumber: number;
  added: { files: number; rows: number };
  existing: { files: number; rows: number };
}

/** Days since the epoch of a YYYY-MM-DD day: the Iceberg `day` transform's value. */
export const epochDay = (day: string): number => Math.round(Date.parse(`${day}T00:00:00Z`) / 86_400_000);

const le32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
};
const le64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(BigInt(Math.trunc(n)));
  return b;
};

/** The manifest of one ingest day at snapshot `snapshotId`: files it adds now are ADDED, the rest EXISTING. */
export function manifestFile(location: string, day: string, files: ArchivedFile[], snapshotId: number): Buffer {
  const entries = files.map((f) => ({
    status: f.snapshotId === snapshotId ? 1 : 0,
    snapshot_id: f.snapshotId,
    sequence_number: f.sequenceNumber,
    file_sequence_number: f.sequenceNumber,
    data_file: {
      content: 0,
      file_path: `${location}/${f.key}`,
      file_format: 'PARQUET',
      partition: { ingest_day: epochDay(day) },
      record_count: f.rows,
      file_size_in_bytes: f.bytes,
      // Bounds of `timestamp` (3) and `ingest_timestamp` is the partition already.
      lower_bounds: [{ key: 3, value: le64(f.minTsUs) }],
      upper_bounds: [{ key: 3, value: le64(f.maxTsUs) }],
    },
  }));
  return avroContainer(MANIFEST_ENTRY, entries, {
    schema: JSON.stringify(ICEBERG_SCHEMA),
    'schema-id': '0',
    'partition-spec': JSON.stringify(PARTITION_SPEC),
    'partition-spec-id': '0',
    'format-version': '2',
    content: 'data',
  });
}

export function manifestList(location: string, manifests: ManifestRecord[], snapshot: { id: number; parentId: number | null; sequenceNumber: number }): Buffer {
  const records = manifests.map((m) => ({
    manifest_path: `${location}/${m.key}`,
    manifest_length: m.bytes,
    partition_spec_id: 0,
    content: 0,
    sequence_number: m.sequenceNumber,
    min_sequence_number: m.minSequenceNumber,
    added_snapshot_id: m.snapshotId,
    added_files_count: m.added.files,
    existing_files_count: m.existing.files,
    deleted_files_count: 0,
    added_rows_count: m.added.rows,
    existing_rows_count: m.existing.rows,
    deleted_rows_count: 0,
    partitions: [{ contains_null: false, contains_nan: null, lower_bound: le32(epochDay(m.day)), upper_bound: le32(epochDay(m.day)) }],
  }));
  return avroContainer(MANIFEST_FILE, records, {
    'snapshot-id': String(snapshot.id),
    'parent-snapshot-id': snapshot.parentId === null ? 'null' : String(snapshot.parentId),
    'sequence-number': String(snapshot.sequenceNumber),
    'format-version': '2',
  });
}

export interface TableState {
  tableUuid: string;
  location: string;
  /** Snapshots still kept, oldest first; the last is the current one. */
  snapshots: SnapshotRecord[];
  /** Earlier metadata files (key, written at), oldest first. */
  metadataLog: Array<{ key: string; timestampMs: number }>;
  lastUpdatedMs: number;
}

export function tableMetadata(t: TableState): string {
  const current = t.snapshots.at(-1) ?? null;
  return JSON.stringify(
    {
      'format-version': 2,
      'table-uuid': t.tableUuid,
      location: t.location,
      'last-sequence-number': current?.sequenceNumber ?? 0,
      'last-updated-ms': t.lastUpdatedMs,
      'last-column-id': 8,
      'current-schema-id': 0,
      schemas: [ICEBERG_SCHEMA],
      'default-spec-id': 0,
      'partition-specs': [{ 'spec-id': 0, fields: PARTITION_SPEC }],
      'last-partition-id': PARTITION_FIELD_ID,
      'default-sort-order-id': 0,
      'sort-orders': [{ 'order-id': 0, fields: [] }],
      properties: {
        'write.format.default': 'parquet',
        'write.parquet.compression-codec': 'zstd',
        // Parquet written by the engine carries no field ids: readers match columns by name.
        'schema.name-mapping.default': JSON.stringify(ICEBERG_SCHEMA.fields.map((f) => ({ 'field-id': f.id, names: [f.name] }))),
      },
      'current-snapshot-id': current?.snapshotId ?? -1,
      refs: current ? { main: { 'snapshot-id': current.snapshotId, type: 'branch' } } : {},
      snapshots: t.snapshots.map((s) => ({
        'snapshot-id': s.snapshotId,
        ...(s.parentId === null ? {} : { 'parent-snapshot-id': s.parentId }),
        'sequence-number': s.sequenceNumber,
        'timestamp-ms': s.timestampMs,
        'manifest-list': `${t.location}/${s.manifestList}`,
        summary: s.summary,
        'schema-id': 0,
      })),
      'snapshot-log': t.snapshots.map((s) => ({ 'timestamp-ms': s.timestampMs, 'snapshot-id': s.snapshotId })),
      'metadata-log': t.metadataLog.map((m) => ({ 'timestamp-ms': m.timestampMs, 'metadata-file': `${t.location}/${m.key}` })),
    },
    null,
    2,
  );
}
