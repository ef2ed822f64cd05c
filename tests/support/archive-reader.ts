// Reads an archived Iceberg table the way another tool would, without the appliance's archive
// code: the metadata JSON by hand, the Avro manifest list and manifests through the engine's own
// Avro reader, and the Parquet files they list through DuckDB (@duckdb/node-api).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Analytics } from '../../service/src/storage/clickhouse.ts';

const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export interface IcebergView {
  metadata: any;
  /** Absolute paths of the current snapshot's data files, with the ingest day (YYYY-MM-DD) of each. */
  files: Array<{ path: string; day: string; records: number }>;
}

/** The current snapshot of the table in `tableDir` (a local archive's <root>/<fractal>). */
export async function readIcebergTable(ch: Analytics, tableDir: string): Promise<IcebergView> {
  const version = readFileSync(path.join(tableDir, 'metadata', 'version-hint.text'), 'utf8').trim();
  const metadata = JSON.parse(readFileSync(path.join(tableDir, 'metadata', `v${version}.metadata.json`), 'utf8'));
  const current = metadata.snapshots.find((s: any) => s['snapshot-id'] === metadata['current-snapshot-id']);
  if (!current) return { metadata, files: [] };
  const avro = async (file: string, select: string) => {
    const rs = await ch.client.query({ query: `SELECT ${select} FROM file(${lit(file)}, 'Avro')`, format: 'JSONEachRow' });
    return (await rs.json()) as any[];
  };
  const manifests = await avro(current['manifest-list'], 'manifest_path');
  const files: IcebergView['files'] = [];
  for (const m of manifests) {
    const entries = await avro(
      m.manifest_path,
      `status, tupleElement(data_file, 'file_path') AS path, tupleElement(tupleElement(data_file, 'partition'), 'ingest_day') AS day, tupleElement(data_file, 'record_count') AS records`,
    );
    for (const e of entries) if (Number(e.status) !== 2) files.push({ path: e.path, day: String(e.day), records: Number(e.records) });
  }
  return { metadata, files };
}

export interface ParquetLog {
  log_id: string;
  timestamp_ns: string;
  raw: string;
  fields: string;
}

/** Every row of the Parquet files, read by DuckDB. */
export async function readParquetWithDuckDb(files: string[]): Promise<ParquetLog[]> {
  if (!files.length) return [];
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const list = files.map(lit).join(', ');
    const r = await con.runAndReadAll(
      `SELECT CAST(log_id AS VARCHAR) AS log_id, CAST(timestamp_ns AS VARCHAR) AS timestamp_ns, raw, fields FROM read_parquet([${list}]) ORDER BY log_id`,
    );
    return r.getRowObjectsJson() as unknown as ParquetLog[];
  } finally {
    con.closeSync();
    db.closeSync();
  }
}
