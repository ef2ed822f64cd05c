// Versioned ClickHouse schema. Applied in order at start; each applied version is recorded in
// <db>.schema_migrations so a restart (or another appliance on the same server) skips it.
// Minimum remote server version: 25.3 (the `JSON` column type became generally available there).
import { chTime, type Analytics } from './clickhouse.ts';

interface Migration {
  version: number;
  name: string;
  statements: (t: (name: string) => string) => string[];
}

const CLICKHOUSE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'logs table',
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t('logs')} (
        fractal_id UUID,
        timestamp DateTime64(9, 'UTC'),
        ingest_timestamp DateTime64(9, 'UTC'),
        log_id UUID,
        raw String CODEC(ZSTD(1)),
        fields JSON
      ) ENGINE = MergeTree
      PARTITION BY toYYYYMM(timestamp)
      ORDER BY (fractal_id, timestamp, log_id)`,
    ],
  },
  {
    // The ingest pipeline's way in: rows carry the record's text once (raw); the engine turns it
    // into the `fields` JSON itself, or reads `fields` (JSON text) when the pipeline changed the
    // record (flattened, renamed, exact big numbers). Measured: the engine ingests such rows with
    // about a quarter less CPU than rows holding the fields as a nested object, and the rows the
    // pipeline queues and spools are about a third smaller. Null engine: nothing is kept here.
    version: 2,
    name: 'logs ingest entry',
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t('logs_ingest')} (
        fractal_id UUID,
        timestamp DateTime64(9, 'UTC'),
        ingest_timestamp DateTime64(9, 'UTC'),
        log_id UUID,
        raw String,
        fields String DEFAULT ''
      ) ENGINE = Null`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t('logs_ingest_mv')} TO ${t('logs')} AS
        SELECT fractal_id, timestamp, ingest_timestamp, log_id, raw,
               CAST(if(fields = '', raw, fields) AS JSON) AS fields
        FROM ${t('logs_ingest')}`,
    ],
  },
  {
    // A result row shows the event's fields as text. Rebuilding that text from the `fields` JSON
    // cost more than the search that found the rows (10,000 rows out of ten million: 2.6 s against
    // 1.4 s reading a String column). So the text the pipeline made is kept too: `fields_text` is
    // the ingest row's `fields`, '' when the record's own text (`raw`) is the fields (most JSON
    // records; see ingest/verbatim.ts). Rows stored before this version, and rows inserted into
    // `logs` directly, read the rebuilt text through the default.
    version: 3,
    name: 'logs fields text',
    statements: (t) => [
      `ALTER TABLE ${t('logs')} ADD COLUMN IF NOT EXISTS fields_text String DEFAULT toString(fields) CODEC(ZSTD(1))`,
      `ALTER TABLE ${t('logs_ingest_mv')} MODIFY QUERY
        SELECT fractal_id, timestamp, ingest_timestamp, log_id, raw,
               CAST(if(${t('logs_ingest')}.fields = '', raw, ${t('logs_ingest')}.fields) AS JSON) AS fields,
               ${t('logs_ingest')}.fields AS fields_text
        FROM ${t('logs_ingest')}`,
    ],
  },
  {
    // Rows of the user-managed dictionaries match() joins (SQLite holds their definitions). A row
    // is its primary key's value and its columns as text; writing a key again adds a newer
    // version, deleting adds a tombstone, and readers take each key's newest version, so reads
    // are exact whether or not the engine has merged the versions yet.
    version: 4,
    name: 'dictionary rows',
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t('dictionary_rows')} (
        dictionary_id UUID,
        generation UInt32,
        row_key String,
        values Map(String, String),
        version UInt64,
        deleted UInt8 DEFAULT 0
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY (dictionary_id, generation, row_key)`,
    ],
  },
  {
    // The alert engine reads windows of arrival (`ingest_timestamp`), which the sort key does not
    // order: a min/max of it per granule lets each window's read skip the granules written before
    // it (a log's arrival is close to its event time, so most granules hold a narrow span; a late
    // log only widens its own granule's). Existing parts get the index in the background.
    version: 5,
    name: 'logs ingest time index',
    statements: (t) => [
      `ALTER TABLE ${t('logs')} ADD INDEX IF NOT EXISTS logs_ingest_time ingest_timestamp TYPE minmax GRANULARITY 1`,
      `ALTER TABLE ${t('logs')} MATERIALIZE INDEX logs_ingest_time`,
    ],
  },
  {
    // The archive's staging table (archive/archiver.ts): the spooled rows of one roll are inserted
    // here, then read back per fractal and ingest day as Parquet. Memory: nothing here must last.
    version: 7,
    name: 'archive stage',
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t('archive_stage')} (
        fractal_id UUID,
        timestamp DateTime64(9, 'UTC'),
        ingest_timestamp DateTime64(9, 'UTC'),
        log_id UUID,
        raw String,
        fields String DEFAULT ''
      ) ENGINE = Memory`,
    ],
  },
  {
    // Merges read and write the `JSON` column path by path instead of all columns of all parts at
    // once (ClickHouse's vertical merge, which it picks by itself only from 11 columns and 131,072
    // rows): measured on mixed logs, a merge's memory fell from 280–390 MB to 200–280 MB, and the
    // peak RSS of 500,000 ingested logs from 1,553 to 1,200 MB with the merge soft limit
    // (storage/clickhouse.ts engineMemoryArgs). Parts already stored merge the same way from now.
    version: 8,
    name: 'logs vertical merges',
    statements: (t) => [
      `ALTER TABLE ${t('logs')} MODIFY SETTING vertical_merge_algorithm_min_columns_to_activate = 1, vertical_merge_algorithm_min_rows_to_activate = 1`,
    ],
  },
  {
    // An insert of the ingest pipeline (25,000–50,000 rows) was written as a Wide part: a file or
    // two per column and per path of the `JSON` column, about 700 files for mixed logs, which the
    // next merge deletes again. Creating and deleting that many files cost the kernel as much CPU
    // as the engine spent on the rows (ext4 inode allocation: 22–26 µs a mixed log of system time
    // against 2.5 as Compact parts, one data file; 1-in-flight inserts 22–27k → 41–43k logs/s;
    // docs/architecture.md "Compact parts for inserts"). Parts stay Compact below 100,000 rows,
    // above every insert's size; merges past it write Wide parts as before, which larger reads want.
    version: 9,
    name: 'logs compact inserted parts',
    statements: (t) => [`ALTER TABLE ${t('logs')} MODIFY SETTING min_rows_for_wide_part = 100000`],
  },
];

export async function migrateClickHouse(ch: Analytics): Promise<void> {
  const { client, database } = ch;
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${ch.table('schema_migrations')} (
      version UInt32, name String, applied_at DateTime64(3, 'UTC')
    ) ENGINE = MergeTree ORDER BY version`,
  });
  const rs = await client.query({ query: `SELECT version FROM ${ch.table('schema_migrations')}`, format: 'JSONEachRow' });
  const done = new Set(((await rs.json()) as Array<{ version: number }>).map((r) => Number(r.version)));
  for (const m of CLICKHOUSE_MIGRATIONS) {
    if (done.has(m.version)) continue;
    for (const sql of m.statements(ch.table)) await client.command({ query: sql });
    await client.insert({
      table: ch.table('schema_migrations'),
      values: [{ version: m.version, name: m.name, applied_at: chTime(new Date()) }],
      format: 'JSONEachRow',
    });
  }
}
