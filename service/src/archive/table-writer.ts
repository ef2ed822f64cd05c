// One change to a fractal's Iceberg table (files added by a roll, days dropped by retention, files
// replaced by compaction): writes the touched days' manifests, the snapshot's manifest list and
// the next metadata version to the backend, and returns what the catalog records in the same
// transaction as the rest of the commit. Keys it writes are named by the snapshot, so writing
// them again after a crash before the catalog commit replaces them with the same content.
import { randomInt, randomUUID } from 'node:crypto';
import type { ArchiveStore, TableCommit } from './archive-store.ts';
import type { ArchiveBackend } from './backend.ts';
import { manifestFile, manifestList, tableMetadata, type ArchivedFile, type ManifestRecord, type SnapshotRecord } from './iceberg.ts';

/** Metadata files listed in the metadata log; older ones are garbage. */
const METADATA_LOG_KEEP = 10;

export interface TableChange {
  added: Array<Omit<ArchivedFile, 'snapshotId' | 'sequenceNumber'>>;
  /** Table-relative keys of data files leaving the table. */
  removed: string[];
  operation: 'append' | 'delete' | 'replace';
  /** Snapshots older than this (but the new one) are expired. */
  expireBeforeMs: number;
  summary?: Record<string, string>;
}

export async function writeTableChange(backend: ArchiveBackend, store: ArchiveStore, fractalId: string, change: TableChange, nowMs = Date.now()): Promise<TableCommit> {
  const table = store.table(fractalId) ?? { fractal_id: fractalId, table_uuid: randomUUID(), metadata_version: 0, metadata_log: '[]', last_maintenance: null };
  const location = backend.location(fractalId);
  const snapshots = store.snapshots(fractalId);
  const parent = snapshots.at(-1) ?? null;
  const seq = (parent?.sequenceNumber ?? 0) + 1;
  // Positive and within 2^53, so the id is exact in JSON readers that use doubles.
  const snapshotId = randomInt(1, 2 ** 47) * 64 + randomInt(0, 64);
  const key = (k: string) => `${fractalId}/${k}`;

  const before = store.files(fractalId);
  const removed = new Set(change.removed);
  const added: ArchivedFile[] = change.added.map((f) => ({ ...f, snapshotId, sequenceNumber: seq }));
  const live = [...before.filter((f) => !removed.has(f.key)), ...added];
  const touched = new Set([...added.map((f) => f.day), ...before.filter((f) => removed.has(f.key)).map((f) => f.day)]);

  const oldManifests = new Map(store.manifests(fractalId).map((m) => [m.day, m]));
  const manifests: ManifestRecord[] = [];
  const droppedDays: string[] = [];
  const garbage: string[] = [...change.removed.map(key)];
  for (const day of [...touched].sort()) {
    const old = oldManifests.get(day);
    if (old) garbage.push(key(old.key));
    const files = live.filter((f) => f.day === day);
    if (!files.length) {
      droppedDays.push(day);
      oldManifests.delete(day);
      continue;
    }
    const body = manifestFile(location, day, files, snapshotId);
    const m: ManifestRecord = {
      key: `metadata/m-${day}-${snapshotId}.avro`,
      day,
      bytes: body.length,
      snapshotId,
      sequenceNumber: seq,
      minSequenceNumber: Math.min(...files.map((f) => f.sequenceNumber)),
      added: { files: files.filter((f) => f.snapshotId === snapshotId).length, rows: sum(files.filter((f) => f.snapshotId === snapshotId).map((f) => f.rows)) },
      existing: { files: files.filter((f) => f.snapshotId !== snapshotId).length, rows: sum(files.filter((f) => f.snapshotId !== snapshotId).map((f) => f.rows)) },
    };
    await backend.put(key(m.key), body);
    manifests.push(m);
    oldManifests.set(day, m);
  }

  const current = [...oldManifests.values()].sort((a, b) => a.day.localeCompare(b.day));
  const listKey = `metadata/snap-${snapshotId}-${seq}.avro`;
  await backend.put(key(listKey), manifestList(location, current, { id: snapshotId, parentId: parent?.snapshotId ?? null, sequenceNumber: seq }));
  const removedFiles = before.filter((f) => removed.has(f.key));
  const snapshot: SnapshotRecord = {
    snapshotId,
    parentId: parent?.snapshotId ?? null,
    sequenceNumber: seq,
    timestampMs: nowMs,
    manifestList: listKey,
    summary: {
      operation: change.operation,
      'added-data-files': String(added.length),
      'added-records': String(sum(added.map((f) => f.rows))),
      'added-files-size': String(sum(added.map((f) => f.bytes))),
      'deleted-data-files': String(removedFiles.length),
      'deleted-records': String(sum(removedFiles.map((f) => f.rows))),
      'total-data-files': String(live.length),
      'total-records': String(sum(live.map((f) => f.rows))),
      'total-files-size': String(sum(live.map((f) => f.bytes))),
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
      ...change.summary,
    },
  };
  const expired = snapshots.filter((s) => s.timestampMs < change.expireBeforeMs);
  for (const s of expired) garbage.push(key(s.manifestList));
  const kept = [...snapshots.filter((s) => s.timestampMs >= change.expireBeforeMs), snapshot];

  const version = table.metadata_version + 1;
  const metadataLog = JSON.parse(table.metadata_log) as Array<{ key: string; timestampMs: number }>;
  if (table.metadata_version > 0) metadataLog.push({ key: `metadata/v${table.metadata_version}.metadata.json`, timestampMs: nowMs });
  while (metadataLog.length > METADATA_LOG_KEEP) garbage.push(key(metadataLog.shift()!.key));
  const metadataKey = `metadata/v${version}.metadata.json`;
  await backend.put(key(metadataKey), Buffer.from(tableMetadata({ tableUuid: table.table_uuid, location, snapshots: kept, metadataLog, lastUpdatedMs: nowMs })));
  // Hadoop-style catalogs (and the engine's icebergLocal) find the newest version through this hint.
  await backend.put(key('metadata/version-hint.text'), Buffer.from(String(version)));

  return {
    fractalId,
    table: { ...table, metadata_version: version, metadata_log: JSON.stringify(metadataLog), last_maintenance: change.operation === 'append' ? table.last_maintenance : new Date(nowMs).toISOString() },
    snapshot,
    expiredSnapshots: expired.map((s) => s.snapshotId),
    addedFiles: added,
    removedFiles: change.removed,
    manifests,
    droppedDays,
    garbage,
  };
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
