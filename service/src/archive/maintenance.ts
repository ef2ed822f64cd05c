// Maintenance of one fractal's archive table (run one at a time with the rolls): archive retention
// drops whole ingest-day partitions older than `archive_retention_days`; compaction rewrites runs
// of small files of finished days into one; snapshots older than the keep time expire, and files
// no kept snapshot names (dropped partitions, compacted sources, old manifests and metadata, and
// files of rolls a crash left uncommitted) are deleted.
import type { Analytics } from '../storage/clickhouse.ts';
import type { ArchiveStore } from './archive-store.ts';
import type { ArchiveBackend } from './backend.ts';
import { ARCHIVE_STRUCTURE, type ArchivedFile } from './iceberg.ts';
import { writeTableChange } from './table-writer.ts';

/** Files below this are compacted; a compacted file holds up to COMPACT_TARGET bytes. */
const SMALL_FILE = 32 << 20;
const COMPACT_TARGET = 128 << 20;
/** Uncommitted data files younger than this may belong to a roll being retried: left alone. */
const ORPHAN_AGE_MS = 3_600_000;

export interface MaintenanceOptions {
  retentionDays: number | null;
  snapshotKeepMs: number;
  nowMs?: number;
}

export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export async function maintainTable(backend: ArchiveBackend, store: ArchiveStore, ch: Analytics, fractalId: string, o: MaintenanceOptions): Promise<{ droppedDays: string[]; compacted: number }> {
  const now = o.nowMs ?? Date.now();
  const files = store.files(fractalId);
  // A day expires once all of it is older than the retention: its ingest day ended before the cutoff.
  const cutoffDay = o.retentionDays ? dayOf(now - o.retentionDays * 86_400_000) : null;
  const expired = cutoffDay ? files.filter((f) => f.day < cutoffDay) : [];
  const expiredDays = [...new Set(expired.map((f) => f.day))];

  const today = dayOf(now);
  const added: Array<Omit<ArchivedFile, 'snapshotId' | 'sequenceNumber'>> = [];
  const replaced: string[] = [];
  for (const group of compactionGroups(files.filter((f) => f.day < today && !expiredDays.includes(f.day)))) {
    const name = group[0]!.key.slice(group[0]!.key.lastIndexOf('/') + 1).replace(/\.parquet$/, '');
    const key = `data/ingest_day=${group[0]!.day}/compacted-${name}-${group.length}.parquet`;
    const rs = await ch.client.exec({
      query: `SELECT * FROM ${backend.engineSource(group.map((f) => `${fractalId}/${f.key}`), ARCHIVE_STRUCTURE)} ORDER BY timestamp_ns, log_id FORMAT Parquet`,
      clickhouse_settings: { output_format_parquet_compression_method: 'zstd', output_format_parquet_string_as_string: 1 },
    });
    const chunks: Buffer[] = [];
    for await (const c of rs.stream) chunks.push(c as Buffer);
    const data = Buffer.concat(chunks);
    await backend.put(`${fractalId}/${key}`, data);
    added.push({
      key,
      day: group[0]!.day,
      rows: group.reduce((n, f) => n + f.rows, 0),
      bytes: data.length,
      minTsUs: Math.min(...group.map((f) => f.minTsUs)),
      maxTsUs: Math.max(...group.map((f) => f.maxTsUs)),
    });
    replaced.push(...group.map((f) => f.key));
  }

  if (expired.length || added.length) {
    const commit = await writeTableChange(
      backend,
      store,
      fractalId,
      {
        added,
        removed: [...expired.map((f) => f.key), ...replaced],
        operation: expired.length ? 'delete' : 'replace',
        expireBeforeMs: now - o.snapshotKeepMs,
        summary: expiredDays.length ? { 'svc.retention-dropped-days': expiredDays.join(',') } : {},
      },
      now,
    );
    store.commit([commit], null);
  } else {
    store.touchMaintenance(fractalId, new Date(now).toISOString());
  }

  // Files no kept snapshot names any more.
  const garbage = store.garbageBefore(now - o.snapshotKeepMs + 1);
  for (const key of garbage) await backend.delete(key);
  store.dropGarbage(garbage);
  // Data files of rolls a crash left uncommitted (named in no catalog row, written long ago).
  const known = new Set(store.files(fractalId).map((f) => `${fractalId}/${f.key}`));
  for (const key of await backend.list(`${fractalId}/data/`)) {
    if (known.has(key)) continue;
    const day = /ingest_day=(\d{4}-\d\d-\d\d)/.exec(key)?.[1];
    if (day && Date.parse(`${day}T00:00:00Z`) + 86_400_000 + ORPHAN_AGE_MS < now) await backend.delete(key);
  }
  return { droppedDays: expiredDays, compacted: replaced.length };
}

/** Runs of small files of one day, each run at most COMPACT_TARGET bytes and at least two files. */
function compactionGroups(files: ArchivedFile[]): ArchivedFile[][] {
  const groups: ArchivedFile[][] = [];
  let run: ArchivedFile[] = [];
  let bytes = 0;
  const close = () => {
    if (run.length >= 2) groups.push(run);
    run = [];
    bytes = 0;
  };
  for (const f of files) {
    if (f.bytes >= SMALL_FILE || (run.length && (run[0]!.day !== f.day || bytes + f.bytes > COMPACT_TARGET))) close();
    if (f.bytes >= SMALL_FILE) continue;
    run.push(f);
    bytes += f.bytes;
  }
  close();
  return groups;
}
