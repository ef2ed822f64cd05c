// Every SVC_* variable of conventions.md, parsed and validated in one place.
// An invalid value throws ConfigError naming the variable; start-up prints that one line and exits.
import path from 'node:path';

export class ConfigError extends Error {}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface ClickHouseRemote {
  url: string;
  user: string;
  password: string;
  database: string;
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** null: the embedded engine (chDB) under dataDir. */
  clickhouse: ClickHouseRemote | null;
  /** Database name used in both transports. */
  clickhouseDatabase: string;
  adminUsername: string;
  /** null: generated on first start and written to dataDir/initial-admin-password. */
  adminPassword: string | null;
  baseUrl: string | null;
  /** null: generated into dataDir/secret.key. */
  secretKey: string | null;
  maxBodySize: number;
  ingestRateLimit: number;
  ingestRateBurst: number;
  ingestQueueSize: number;
  /** Bytes of rows the ingest queue holds at most (SVC_INGEST_QUEUE_BYTES; an addition to the spec). */
  ingestQueueBytes: number;
  ingestWorkers: number;
  metricsEnabled: boolean;
  metricsHost: string;
  metricsPort: number;
  queryTimeoutS: number;
  /** Memory the engine may use for one query (max_memory_usage), in bytes. */
  queryMaxMemoryBytes: number;
  /**
   * Memory the embedded engine may use in all (max_server_memory_usage; SVC_ENGINE_MAX_MEMORY_MB,
   * an addition to the spec): past it a statement is refused (an insert is split or retried, a
   * query fails with a sentence) rather than the process growing. Not applied to a remote server.
   * Default 896 MiB (docs/ingest.md); 0 leaves the engine's own bound (90 % of RAM). A cap once
   * made queries twice as slow: the engine gave them one thread per GiB free under it, which
   * storage/clickhouse.ts now lowers to 128 MiB.
   */
  engineMaxMemoryBytes: number;
  alertIntervalS: number;
  /** How long git may take to clone a feed's repository (SVC_FEED_GIT_TIMEOUT_S; a hanging server is given up on). */
  feedGitTimeoutS: number;
  ai: { baseUrl: string; apiKey: string | null; model: string | null } | null;
  logLevel: LogLevel;
  /**
   * Whose X-Forwarded-For/-Proto/-Host to believe: false (nobody: the peer is the client), true
   * (any peer), or the addresses/CIDRs of the reverse proxies in front of the appliance.
   */
  trustProxy: boolean | string[];
  /** The session cookie's Secure flag: `auto` sets it on requests that arrived over https. */
  secureCookie: 'auto' | 'always' | 'never';
  /**
   * The archive (docs/archive.md; additions to the spec): a Parquet file is cut once this many
   * seconds passed since its first log (SVC_ARCHIVE_ROLL_S) or it holds this many MB of rows
   * (SVC_ARCHIVE_ROLL_MB); snapshots older than SVC_ARCHIVE_SNAPSHOT_KEEP_S expire, and files
   * no kept snapshot names are deleted then; maintenance runs every SVC_ARCHIVE_MAINTENANCE_S.
   */
  archive: { rollMs: number; rollBytes: number; snapshotKeepMs: number; maintenanceMs: number; maxDeferMs: number };
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function integer(env: Env, name: string, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = read(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return def;
  const v = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/**
 * A URL fit to print or show: user name, password and query string (which may carry either)
 * dropped, so SVC_CLICKHOUSE_URL's credentials never reach a log line or an API answer.
 */
export function redactedUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

function httpUrl(env: Env, name: string): string | undefined {
  const raw = read(env, name);
  if (raw === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL with an http:// or https:// scheme, got "${raw}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ConfigError(`${name} must be a URL with an http:// or https:// scheme, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** Accepts ":9090", "9090", "127.0.0.1:9090", "[::1]:9090". */
/** host:port or :port; port 0 lets the system pick a free one (the start-up lines print it). */
function listenAddress(env: Env, name: string, def: string): { host: string; port: number } {
  const raw = read(env, name) ?? def;
  const m = /^(?:\[([^\]]+)\]|([^:]*))?:?(\d+)$/.exec(raw);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new ConfigError(`${name} must be host:port or :port with a port from 0 (any free port) to 65535, got "${raw}"`);
  }
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/** SVC_TRUST_PROXY: true/false, or a comma-separated list of proxy addresses or CIDRs. */
function trustProxy(env: Env): boolean | string[] {
  const raw = read(env, 'SVC_TRUST_PROXY');
  if (raw === undefined) return false;
  const v = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  const list = raw.split(',').map((x) => x.trim()).filter(Boolean);
  const address = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-f:]*:[0-9a-f:.]*)(\/\d{1,3})?$/i;
  const bad = list.find((x) => !address.test(x));
  if (bad !== undefined || list.length === 0) {
    throw new ConfigError(`SVC_TRUST_PROXY must be true, false or a comma-separated list of proxy addresses or CIDRs, got "${raw}"`);
  }
  return list;
}

function secureCookie(env: Env): Config['secureCookie'] {
  const raw = (read(env, 'SVC_SECURE_COOKIE') ?? 'auto').toLowerCase();
  if (raw === 'auto') return 'auto';
  if (['true', '1', 'yes', 'on', 'always'].includes(raw)) return 'always';
  if (['false', '0', 'no', 'off', 'never'].includes(raw)) return 'never';
  throw new ConfigError(`SVC_SECURE_COOKIE must be auto, true or false, got "${read(env, 'SVC_SECURE_COOKIE')}"`);
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function loadConfig(env: Env = process.env, defaults: { dataDir?: string } = {}): Config {
  const chUrl = httpUrl(env, 'SVC_CLICKHOUSE_URL');
  const database = read(env, 'SVC_CLICKHOUSE_DATABASE') ?? 'svc';
  if (!IDENT.test(database)) {
    throw new ConfigError(`SVC_CLICKHOUSE_DATABASE must be a plain identifier (letters, digits, _), got "${database}"`);
  }
  const logLevel = (read(env, 'SVC_LOG_LEVEL') ?? 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`SVC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${read(env, 'SVC_LOG_LEVEL')}"`);
  }
  const adminUsername = read(env, 'SVC_ADMIN_USERNAME') ?? 'admin';
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(adminUsername)) {
    throw new ConfigError(`SVC_ADMIN_USERNAME must be 1-64 letters, digits or . _ @ -, got "${adminUsername}"`);
  }
  const adminPassword = env.SVC_ADMIN_PASSWORD ? env.SVC_ADMIN_PASSWORD : null;
  if (adminPassword !== null && adminPassword.length < 8) {
    throw new ConfigError('SVC_ADMIN_PASSWORD must be at least 8 characters long');
  }
  const secretKey = read(env, 'SVC_SECRET_KEY') ?? null;
  if (secretKey !== null && secretKey.length < 16) {
    throw new ConfigError('SVC_SECRET_KEY must be at least 16 characters long');
  }
  const metrics = listenAddress(env, 'SVC_METRICS_ADDR', ':9090');
  const aiBase = httpUrl(env, 'SVC_AI_BASE_URL');
  const host = read(env, 'SVC_HOST') ?? '0.0.0.0';
  if (/\s/.test(host)) throw new ConfigError(`SVC_HOST must be a host name or address, got "${host}"`);

  return {
    host,
    port: integer(env, 'SVC_PORT', 8080, 0, 65535),
    dataDir: path.resolve(read(env, 'SVC_DATA_DIR') ?? defaults.dataDir ?? './data'),
    clickhouse: chUrl
      ? {
          url: chUrl,
          user: read(env, 'SVC_CLICKHOUSE_USER') ?? 'default',
          password: env.SVC_CLICKHOUSE_PASSWORD ?? '',
          database,
        }
      : null,
    clickhouseDatabase: database,
    adminUsername,
    adminPassword,
    baseUrl: httpUrl(env, 'SVC_BASE_URL') ?? null,
    secretKey,
    maxBodySize: integer(env, 'SVC_MAX_BODY_SIZE', 209_715_200, 1024),
    ingestRateLimit: integer(env, 'SVC_INGEST_RATE_LIMIT', 10_000, 1),
    ingestRateBurst: integer(env, 'SVC_INGEST_RATE_BURST', 20_000, 1),
    ingestQueueSize: integer(env, 'SVC_INGEST_QUEUE_SIZE', 100, 1, 100_000),
    ingestQueueBytes: integer(env, 'SVC_INGEST_QUEUE_BYTES', 134_217_728, 1_048_576),
    ingestWorkers: integer(env, 'SVC_INGEST_WORKERS', 4, 1, 64),
    metricsEnabled: bool(env, 'SVC_METRICS_ENABLED', false),
    metricsHost: metrics.host,
    metricsPort: metrics.port,
    queryTimeoutS: integer(env, 'SVC_QUERY_TIMEOUT_S', 60, 1, 86_400),
    queryMaxMemoryBytes: integer(env, 'SVC_QUERY_MAX_MEMORY_MB', 1024, 64, 1_048_576) * 1024 * 1024,
    engineMaxMemoryBytes: (() => {
      const mb = integer(env, 'SVC_ENGINE_MAX_MEMORY_MB', 896, 0, 1_048_576);
      if (mb > 0 && mb < 256) throw new ConfigError(`SVC_ENGINE_MAX_MEMORY_MB must be 0 (the engine's own bound) or at least 256, got ${mb}`);
      return mb * 1024 * 1024;
    })(),
    alertIntervalS: integer(env, 'SVC_ALERT_INTERVAL_S', 60, 1, 86_400),
    feedGitTimeoutS: integer(env, 'SVC_FEED_GIT_TIMEOUT_S', 120, 1, 3600),
    ai: aiBase
      ? { baseUrl: aiBase, apiKey: read(env, 'SVC_AI_API_KEY') ?? null, model: read(env, 'SVC_AI_MODEL') ?? null }
      : null,
    logLevel,
    trustProxy: trustProxy(env),
    secureCookie: secureCookie(env),
    archive: {
      rollMs: integer(env, 'SVC_ARCHIVE_ROLL_S', 60, 1, 86_400) * 1000,
      rollBytes: integer(env, 'SVC_ARCHIVE_ROLL_MB', 64, 1, 1024) * 1024 * 1024,
      maxDeferMs: integer(env, 'SVC_ARCHIVE_MAX_DEFER_S', 120, 0, 86_400) * 1000,
      snapshotKeepMs: integer(env, 'SVC_ARCHIVE_SNAPSHOT_KEEP_S', 3600, 0, 31_536_000) * 1000,
      maintenanceMs: integer(env, 'SVC_ARCHIVE_MAINTENANCE_S', 3600, 1, 86_400) * 1000,
    },
  };
}
