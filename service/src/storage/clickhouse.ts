// The one ClickHouse client of the process. Two transports behind the same @clickhouse/client
// interface: the embedded engine (chDB, in-process, data under SVC_DATA_DIR/clickhouse) or a
// remote server over HTTP (SVC_CLICKHOUSE_URL). Every other module receives an `Analytics`.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';

export interface Analytics {
  client: ClickHouseClient;
  transport: 'embedded' | 'remote';
  database: string;
  /** Fully qualified table name: every statement names its database, so both transports agree. */
  table(name: string): string;
  /** True when the engine answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export async function openAnalytics(config: Config): Promise<Analytics> {
  const database = config.clickhouseDatabase;
  let client: ClickHouseClient;
  if (config.clickhouse) {
    client = createClient({
      url: config.clickhouse.url,
      username: config.clickhouse.user,
      password: config.clickhouse.password,
      request_timeout: 600_000,
      clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    });
  } else {
    // Loaded only in embedded mode: the native engine does not exist on every platform.
    // In the Electron bundle (CommonJS) `require` exists and resolves from the app's modules.
    const { createChdbConnection } = (
      typeof require === 'function' ? require('chdb/connection') : await import('chdb/connection')
    ) as typeof import('chdb/connection');
    const dir = path.join(config.dataDir, 'clickhouse');
    mkdirSync(dir, { recursive: true });
    client = createClient({
      connection: createChdbConnection({ path: dir }),
    } as unknown as Parameters<typeof createClient>[0]);
  }
  let closed = false;
  const embedded = !config.clickhouse;
  return {
    client,
    transport: config.clickhouse ? 'remote' : 'embedded',
    database,
    table: (name) => `${database}.${name}`,
    async ping() {
      try {
        const rs = await client.query({ query: 'SELECT 1 AS ok', format: 'JSONEachRow' });
        const rows = (await rs.json()) as Array<{ ok: number }>;
        return rows[0]?.ok === 1;
      } catch {
        return false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
      if (embedded) {
        // close() can return while the engine still holds the data directory; wait until it is
        // really free, so a restart in the same process (tests, the desktop shell) can reopen it.
        const chdb = (typeof require === 'function' ? require('chdb') : await import('chdb')) as typeof import('chdb');
        await chdb.drainPending();
      }
    },
  };
}
