// The one ClickHouse client of the process. Two transports behind the same @clickhouse/client
// interface: the embedded engine (chDB, in-process, data under SVC_DATA_DIR/clickhouse) or a
// remote server over HTTP (SVC_CLICKHOUSE_URL). Every other module receives an `Analytics`.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import path from 'node:path';
import type { ClickHouseRemote, Config } from '../config.ts';
import { LowPriorityThreads, lowerMergePriority } from './engine-threads.ts';
import { SearchActivity } from './search-activity.ts';

export interface Analytics {
  client: ClickHouseClient;
  transport: 'embedded' | 'remote';
  database: string;
  /** Fully qualified table name: every statement names its database, so both transports agree. */
  table(name: string): string;
  /**
   * Streams a SELECT's rows as the engine produces them, in chunks of JSONCompactEachRow arrays.
   * Aborting the signal stops the query inside the engine (embedded: the stream is cancelled;
   * remote: the HTTP request is closed and the server cancels the query). A statement is counted
   * as a search ingest gives way to (`searches`) unless `background` says no analyst waits on it.
   */
  streamRows(sql: string, params: Record<string, unknown>, opts: StreamOptions): AsyncIterable<unknown[][]>;
  /**
   * Inserts rows already written in `format` as one statement (one part). Embedded, the Buffer is
   * handed to the engine without a copy or a detour through a JS string; remote, it is the body.
   */
  insertFormatted(table: string, format: 'JSONEachRow', data: Buffer): Promise<void>;
  /** The searches streamRows is running now (not background statements): ingest holds its next insert while any runs. */
  searches: SearchActivity;
  /** True when the engine answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StreamOptions {
  signal?: AbortSignal;
  /**
   * No analyst is waiting on this statement (the alert engine's windows, dashboard widgets, case
   * exports): ingest does not give way to it, so a dashboard on a wall never holds back shippers.
   */
  background?: boolean;
  /**
   * Nobody waits on it at all (a shared link's refresh, whose readers meanwhile get the last
   * answer): the engine's threads for it run at nice LOW_PRIORITY_NICE (`os_thread_priority`), so
   * they cannot starve the event loop that serves requests. Applied where the engine may change
   * thread priorities (CAP_SYS_NICE); elsewhere the engine ignores it.
   */
  lowPriority?: boolean;
}

/** The nice value of a low-priority statement's engine threads: the event loop (0) weighs about nine times as much. */
export const LOW_PRIORITY_NICE = 10;

/**
 * Settings of every insert into the logs: a string value stays a string in the `fields` JSON.
 * The engine otherwise turns ISO dates and times into Date/DateTime values, which print back
 * differently ("2024-01-01T00:00:00Z" as "2024-01-01 00:00:00") and stop equalling what was sent.
 * An insert is a low-priority statement: its engine threads run at nice LOW_PRIORITY_NICE, so
 * ingest gives way to the analyst's searches and the event loop on the cores too (the threads
 * it leaves niced are put back once no low-priority statement runs, as for streamRows).
 * No bound on the months (partitions) one insert touches: the queue inserts a month at a time,
 * but batches recovered from a spool written before it did may span more than the engine's
 * default 100, which it would refuse on every try.
 */
const INSERT_SETTINGS = {
  input_format_try_infer_dates: 0,
  input_format_try_infer_datetimes: 0,
  os_thread_priority: String(LOW_PRIORITY_NICE),
  max_partitions_per_insert_block: '0',
} as const;

/** The statement with one more setting: our statements end with at most one SETTINGS clause. */
const withSetting = (sql: string, setting: string): string => (/ SETTINGS [^()']*('[^']*'[^()']*)*$/.test(sql) ? `${sql}, ${setting}` : `${sql} SETTINGS ${setting}`);

/**
 * Settings of every embedded session (chDB keeps a session's SETs; the first connection's
 * arguments reach only that session). The engine gives a query one thread per GiB of the memory
 * left under `max_server_memory_usage` (`max_threads_min_free_memory_per_thread`, 1 GiB): under a
 * cap of 896 or 1,536 MiB every read ran on one thread of the two, and the query benchmark about
 * twice as slow. 128 MiB a thread still narrows a query when the engine is really short.
 */
const EMBEDDED_SESSION_SETTINGS = 'SET max_threads_min_free_memory_per_thread = 134217728';

/** A time as the text DateTime64 parameters and JSONEachRow read ("YYYY-MM-DD hh:mm:ss.mmm", UTC). */
export const chTime = (d: Date): string => d.toISOString().replace('T', ' ').replace('Z', '');

export async function openAnalytics(config: Config): Promise<Analytics> {
  const database = config.clickhouseDatabase;
  const t = config.clickhouse ? remoteTransport(config.clickhouse) : await embeddedTransport(path.join(config.dataDir, 'clickhouse'), config.engineMaxMemoryBytes);
  let closed = false;
  const searches = new SearchActivity();
  // In-process, the engine's pool threads are ours: put back those a low-priority statement left niced.
  const lowPriority = config.clickhouse ? null : new LowPriorityThreads(LOW_PRIORITY_NICE);
  return {
    client: t.client,
    transport: config.clickhouse ? 'remote' : 'embedded',
    database,
    table: (name) => `${database}.${name}`,
    async insertFormatted(table, format, data) {
      // Its threads run niced (INSERT_SETTINGS); the ones left so are put back after the last one.
      const low = lowPriority?.begin();
      try {
        await t.insertFormatted(table, format, data);
      } finally {
        low?.();
      }
    },
    async *streamRows(sql, params, opts) {
      const ended = opts.background ? null : searches.begin();
      const low = opts.lowPriority ? lowPriority?.begin() : undefined;
      try {
        yield* t.streamRows(opts.lowPriority ? withSetting(sql, `os_thread_priority = ${LOW_PRIORITY_NICE}`) : sql, params, opts);
      } finally {
        ended?.();
        low?.();
      }
    },
    searches,
    async ping() {
      try {
        const rs = await t.client.query({ query: 'SELECT 1 AS ok', format: 'JSONEachRow' });
        const rows = (await rs.json()) as Array<{ ok: number }>;
        return rows[0]?.ok === 1;
      } catch {
        return false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await t.client.close();
      await t.release();
    },
  };
}

/** What the two transports do differently; openAnalytics builds the rest on top. */
type Transport = Pick<Analytics, 'client' | 'streamRows' | 'insertFormatted'> & {
  /** Frees what the transport holds besides its client (called after the client is closed). */
  release(): Promise<void>;
};

function remoteTransport(remote: ClickHouseRemote): Transport {
  const client = createClient({
    url: remote.url,
    username: remote.user,
    password: remote.password,
    request_timeout: 600_000,
    clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
  });
  return {
    client,
    async *streamRows(sql, params, { signal }) {
      const rs = await client.query({
        query: sql,
        query_params: params,
        format: 'JSONCompactEachRow',
        abort_signal: signal,
        clickhouse_settings: { cancel_http_readonly_queries_on_client_close: 1 },
      });
      for await (const rows of rs.stream()) yield rows.map((r) => r.json() as unknown[]);
    },
    async insertFormatted(table, format, data) {
      const res = await client.exec({
        query: `INSERT INTO ${table} FORMAT ${format}`,
        values: Readable.from([data]),
        clickhouse_settings: INSERT_SETTINGS,
      });
      res.stream.resume();
    },
    async release() {},
  };
}

/**
 * The embedded engine's memory bounds: everything it allocates (`max_server_memory_usage`), and
 * no new merge while running merges hold a quarter of that. Measured on mixed logs (issue 18), a
 * merge of a few parts of the `JSON` column takes 200–400 MB whatever their size (buffers for
 * every path's streams), so two at once were the peaks of the process, not the inserts.
 */
export function engineMemoryArgs(maxMemoryBytes: number): string[] {
  const cap = Math.floor(maxMemoryBytes);
  return [`--max_server_memory_usage=${cap}`, `--merges_mutations_memory_usage_soft_limit=${Math.floor(cap / 4)}`];
}

async function embeddedTransport(dir: string, maxMemoryBytes: number): Promise<Transport> {
  // Loaded only in embedded mode: the native engine does not exist on every platform.
  // In the Electron bundle (CommonJS) `require` exists and resolves from the app's modules.
  const { createChdbConnection } = (
    typeof require === 'function' ? require('chdb/connection') : await import('chdb/connection')
  ) as typeof import('chdb/connection');
  const chdb = (typeof require === 'function' ? require('chdb') : await import('chdb')) as typeof import('chdb');
  mkdirSync(dir, { recursive: true });
  // The engine is configured by the first connection the process opens on its directory; the
  // others share it. Its memory is bounded there when asked (server settings cannot be SET later).
  const first = new chdb.Session(dir, maxMemoryBytes > 0 ? { connectionArgs: engineMemoryArgs(maxMemoryBytes) } : undefined);
  first.query(EMBEDDED_SESSION_SETTINGS);
  const connection = createChdbConnection({ path: dir });
  const client = createClient({ connection } as unknown as Parameters<typeof createClient>[0]);
  await client.command({ query: EMBEDDED_SESSION_SETTINGS });
  // A chDB session streams one query at a time; sessions on the same directory coexist, so
  // streams get a small pool of their own sessions (opened on first use, closed with the engine).
  const idle: InstanceType<typeof chdb.Session>[] = [first];
  const stopSweep = lowerMergePriority();
  const all: InstanceType<typeof chdb.Session>[] = [first];
  return {
    client,
    async *streamRows(sql, params, { signal }) {
      let session = idle.pop();
      if (!session) {
        all.push((session = new chdb.Session(dir)));
        session.query(EMBEDDED_SESSION_SETTINGS);
      }
      // A chDB stream only notices cancellation between chunks, so a long computation would run
      // on after the caller left: tag the statement and KILL it in the engine on abort.
      const tag = `svc-stream:${randomUUID()}`;
      let finished = false;
      const kill = () => {
        if (finished) return;
        client
          .command({ query: `KILL QUERY WHERE position(query, {tag:String}) > 0 AND position(query, 'KILL QUERY') = 0 ASYNC`, query_params: { tag } })
          .catch(() => undefined);
      };
      signal?.addEventListener('abort', kill, { once: true });
      try {
        if (signal?.aborted) return;
        // The engine records the statement re-formatted (comments dropped), settings kept: the tag
        // rides in log_comment. Our statements end with at most one SETTINGS clause.
        const tagged = withSetting(sql, `log_comment = '${tag}'`);
        const stream = session.queryStreamBind(tagged, params, { format: 'JSONCompactEachRow' });
        try {
          for await (const chunk of stream) {
            if (signal?.aborted) break;
            yield chunk.rows<unknown[]>();
          }
          finished = !signal?.aborted;
        } finally {
          if (!stream.closed) stream.cancel();
        }
      } finally {
        signal?.removeEventListener('abort', kill);
        if (!finished) kill();
        idle.push(session);
      }
    },
    async insertFormatted(table, format, values) {
      await connection.chdb.rawInsert({ table, values, format, settings: INSERT_SETTINGS });
    },
    async release() {
      stopSweep();
      for (const session of all) session.close();
      // close() can return while the engine still holds the data directory; wait until it is
      // really free, so a restart in the same process (tests, the desktop shell) can reopen it.
      await chdb.drainPending();
    },
  };
}
