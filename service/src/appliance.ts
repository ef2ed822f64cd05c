// Assembles the appliance: stores, first start, HTTP app with every domain's routes, metrics
// listener. Used by the headless entry (main.ts), the Electron shell and the tests alike.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ActionsStore } from './alerts/actions/actions-store.ts';
import { AlertsStore } from './alerts/alerts-store.ts';
import { ExecutionsStore } from './alerts/executions-store.ts';
import { actionRoutes } from './alerts/actions/routes.ts';
import { AlertEngine } from './alerts/engine/engine.ts';
import { alertRoutes } from './alerts/routes.ts';
import { ArchiveService } from './archive/archive-logic.ts';
import { ArchiveStore } from './archive/archive-store.ts';
import { archiveRoutes } from './archive/routes.ts';
import { registerAccessControl } from './auth/access.ts';
import { ApiKeysStore } from './auth/api-keys-store.ts';
import { LoginLimiter } from './auth/login-limiter.ts';
import { RoleResolver } from './auth/roles.ts';
import { authRoutes } from './auth/routes.ts';
import { SESSION_COOKIE, SessionStore } from './auth/sessions.ts';
import { usersRoutes } from './auth/users-routes.ts';
import { UsersStore } from './auth/users-store.ts';
import { exportFile } from './cases/case-export.ts';
import { CaseJobs } from './cases/case-jobs.ts';
import { CaseJobsStore } from './cases/case-jobs-store.ts';
import { recoverCaseJobs } from './cases/case-recovery.ts';
import { caseRoutes } from './cases/routes.ts';
import { CommentsStore } from './collaboration/comments-store.ts';
import { commentRoutes } from './collaboration/routes.ts';
import { DashboardsStore } from './dashboards/dashboards-store.ts';
import { dashboardRoutes } from './dashboards/routes.ts';
import { DashboardRuns } from './dashboards/widget-runs.ts';
import { DictionariesStore } from './dictionaries/dictionaries-store.ts';
import { dictionaryRoutes } from './dictionaries/routes.ts';
import type { Config } from './config.ts';
import { CustodyStore } from './evidence/custody/custody-store.ts';
import { custodyRoutes } from './evidence/custody/routes.ts';
import { ImportRunner } from './evidence/imports/import-runner.ts';
import { Imports } from './evidence/imports/imports-logic.ts';
import { ImportsStore } from './evidence/imports/imports-store.ts';
import { importRoutes } from './evidence/imports/routes.ts';
import type { Context } from './context.ts';
import { firstStart, type FirstStartInfo } from './first-start.ts';
import { healthRoutes } from './health/routes.ts';
import { createHttpApp } from './http/app.ts';
import { bulkRoutes } from './ingest/bulk/routes.ts';
import { Ingest } from './ingest/pipeline.ts';
import { ingestScope } from './ingest/plugin.ts';
import { otlpRoutes } from './ingest/otlp/routes.ts';
import { ingestRoutes, pressureRoutes } from './ingest/routes.ts';
import { ingestTokenRoutes } from './ingest/token-routes.ts';
import { IngestTokensStore } from './ingest/tokens-store.ts';
import { LiveHub } from './live/hub.ts';
import { LogStore } from './logs/log-store.ts';
import { RetentionEnforcer } from './logs/retention.ts';
import { Metrics } from './metrics/metrics.ts';
import { AiClient } from './notebooks/ai-client.ts';
import { NotebooksStore } from './notebooks/notebooks-store.ts';
import { notebookRoutes } from './notebooks/routes.ts';
import { FeedsStore } from './feeds/feeds-store.ts';
import { syncInBackground, waitForSyncs } from './feeds/feeds-logic.ts';
import { feedRoutes } from './feeds/routes.ts';
import { FeedScheduler } from './feeds/scheduler.ts';
import { NormalizerCache } from './normalizers/normalizer-cache.ts';
import { NormalizersStore } from './normalizers/normalizers-store.ts';
import { normalizerRoutes } from './normalizers/routes.ts';
import { settingsRoutes } from './settings/routes.ts';
import { SettingsStore } from './settings/settings-store.ts';
import { openAnalytics } from './storage/clickhouse.ts';
import { SyslogListeners } from './syslog/listeners-logic.ts';
import { SyslogListenersStore } from './syslog/listeners-store.ts';
import { syslogListenerRoutes } from './syslog/routes.ts';
import { migrateClickHouse } from './storage/clickhouse-migrations.ts';
import { createSecretBox, loadSecretKey } from './storage/secret-box.ts';
import { openMetadata } from './storage/sqlite.ts';
import { fractalRoutes } from './tenancy/fractal-routes.ts';
import { FractalsStore } from './tenancy/fractals-store.ts';
import { groupRoutes } from './tenancy/group-routes.ts';
import { GroupsStore } from './tenancy/groups-store.ts';
import { PermissionsStore } from './tenancy/permissions-store.ts';
import { prismRoutes } from './tenancy/prism-routes.ts';
import { PrismsStore } from './tenancy/prisms-store.ts';
import { scopeAccessRoutes } from './tenancy/scope-access-routes.ts';
import { logsRoutes } from './logs/routes.ts';
import { queryRoutes } from './query/routes.ts';
import { queryLimits } from './query/run.ts';
import { uiRoutes } from './ui/routes.ts';

export type { FirstStartInfo };

export interface Appliance {
  config: Config;
  /** Local address of the UI and API, e.g. http://127.0.0.1:8080. */
  url: string;
  port: number;
  /** Set only on the first start of a data directory. */
  firstStart: FirstStartInfo | null;
  context: Context;
  /** The ingest pipeline every endpoint (and the alert engine's fractal action) writes through. */
  ingest: Ingest;
  /** The alert scheduler and its delivery outbox. */
  alertEngine: AlertEngine;
  /** Where the metrics listener answers (its real port when SVC_METRICS_ADDR asked for 0); null while metrics are off. */
  metricsUrl: string | null;
  /** Every route the service answers (method and URL pattern): what the fuzz tests walk. */
  routes: readonly RouteEntry[];
  /** What the desktop shell's tray shows: logs stored so far (a rate from two readings) and the imports running. */
  activity(): Promise<ApplianceActivity>;
  stop(): Promise<void>;
}

export interface ApplianceActivity {
  /** Logs inserted into storage since the service started (live ingest and imports alike). */
  logsStored: number;
  /** Imports not ended, oldest first: file name, fractal, bytes of the stored file read of its size, events so far. */
  imports: Array<{ name: string; fractal: string; phase: string; bytesRead: number; sizeBytes: number; eventsAccepted: number }>;
}

export interface RouteEntry {
  method: string;
  url: string;
}

export const VERSION: string = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8'),
).version;

export async function startAppliance(config: Config, opts: { log?: boolean } = {}): Promise<Appliance> {
  mkdirSync(config.dataDir, { recursive: true });
  const db = openMetadata(config.dataDir);
  const ch = await openAnalytics(config);
  try {
    await migrateClickHouse(ch);
  } catch (err) {
    db.close();
    await ch.close();
    const where = config.clickhouse ? `ClickHouse at ${config.clickhouse.url}` : `the embedded engine in ${config.dataDir}`;
    throw new Error(`Could not prepare ${where}: ${(err as Error).message}`, { cause: err });
  }
  const secretKey = loadSecretKey(config.dataDir, config.secretKey);
  const box = createSecretBox(secretKey);
  queryLimits.maxMemoryBytes = config.queryMaxMemoryBytes;

  const app = createHttpApp({
    logger: opts.log === false || config.logLevel === 'silent' ? false : { level: config.logLevel },
    bodyLimit: 16 * 1024 * 1024,
    trustProxy: config.trustProxy,
    browser: { sessionCookie: SESSION_COOKIE, publicUrl: config.baseUrl },
    // A refused body is drained up to what ingest would have taken (at least 64 MiB), for at
    // most 30 s, and 5 s without a byte (nginx's lingering_time and lingering_timeout).
    linger: { maxBytes: Math.max(config.maxBodySize, 64 * 1024 * 1024), maxMs: 30_000, idleMs: 5_000 },
  });
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url });
  });
  const fractals = new FractalsStore(db);
  const logs = new LogStore(ch);
  const metrics = new Metrics();
  const normalizers = new NormalizersStore(db);
  const feeds = new FeedsStore(db, box);
  const ctx: Context = {
    config,
    log: app.log,
    version: VERSION,
    startedAt: new Date(),
    db,
    ch,
    metrics,
    users: new UsersStore(db),
    sessions: new SessionStore(db),
    loginLimiter: new LoginLimiter(),
    apiKeys: new ApiKeysStore(db),
    roles: new RoleResolver(db),
    fractals,
    prisms: new PrismsStore(db),
    groups: new GroupsStore(db),
    permissions: new PermissionsStore(db),
    ingestTokens: new IngestTokensStore(db, box),
    normalizers,
    normalizerCache: new NormalizerCache(normalizers),
    logs,
    retention: new RetentionEnforcer(fractals, logs, (err, id) => app.log.error({ err: err.message, fractal: id }, 'retention or quota enforcement failed')),
    settings: new SettingsStore(db, {
      shared_links_enabled: false,
      query_timeout_s: config.queryTimeoutS,
      alert_interval_s: config.alertIntervalS,
      timestamp_fields: [],
      max_query_rows: 10_000,
    }),
    comments: new CommentsStore(db),
    dictionaries: new DictionariesStore(db, ch),
    live: new LiveHub(),
    notebooks: new NotebooksStore(db),
    dashboards: new DashboardsStore(db),
    dashboardRuns: new DashboardRuns(),
    ai: new AiClient(config.ai),
    alerts: new AlertsStore(db),
    alertActions: new ActionsStore(db, box),
    alertExecutions: new ExecutionsStore(db),
    feeds,
    archive: new ArchiveService(new ArchiveStore(db, box), ch, fractals, config, app.log, logs, metrics),
    feedScheduler: new FeedScheduler(feeds, (id) => syncInBackground(ctx, id)),
    custody: new CustodyStore(db, secretKey),
  };
  ctx.sessions.purgeExpired();
  const first = await firstStart(ctx);

  void ctx.retention.enforceAll(); // in the background: start-up must not wait on big deletions
  // Rows of dictionaries deleted with their fractal or prism (SQLite cascades) go here.
  void ctx.dictionaries.purgeOrphanRows().catch((err) => app.log.warn({ err: (err as Error).message }, 'could not remove rows of deleted dictionaries'));
  ctx.retention.start(60_000);
  const ingest = new Ingest(ctx);
  // Before the spool's recovery: it keeps what the archive has not read. A roll waits while storage is behind.
  ctx.archive.open(ingest.spool, () => ingest.queue.backlogged);
  const replayed = await ingest.recover();
  await ctx.archive.start();
  ctx.retention.archiveGate = () => ctx.archive.archiver.archivedBefore();
  if (replayed > 0) app.log.info({ logs: replayed }, 'replaying logs accepted before the last stop');

  ctx.metrics.instrument(app);
  registerAccessControl(app, { sessions: ctx.sessions, apiKeys: ctx.apiKeys, roles: ctx.roles });
  for (const routes of [healthRoutes, authRoutes, usersRoutes, settingsRoutes, fractalRoutes, prismRoutes, groupRoutes, ingestTokenRoutes, normalizerRoutes, queryRoutes, logsRoutes, commentRoutes, dictionaryRoutes, notebookRoutes, dashboardRoutes, alertRoutes, actionRoutes, feedRoutes, archiveRoutes]) {
    await app.register(routes, ctx);
  }
  for (const scope of ['fractal', 'prism'] as const) {
    await app.register(async (a) => scopeAccessRoutes(a as never, ctx, scope));
  }
  await app.register(ingestScope([ingestRoutes, bulkRoutes, otlpRoutes]), { ctx, pipeline: ingest });
  await app.register(pressureRoutes as never, { ctx, pipeline: ingest });
  // Case jobs outlive a restart; those it cut short are reported as failed, their leftovers removed.
  const caseJobs = new CaseJobs(
    new CaseJobsStore(db),
    (job) => {
      if (job.kind === 'export') rmSync(exportFile(ctx, job.id), { force: true });
    },
    (err) => app.log.error({ err: (err as Error).message }, 'a case job failed outside its own error handling'),
  );
  await recoverCaseJobs(ctx, caseJobs);
  await app.register(caseRoutes as never, { ctx, jobs: caseJobs });
  const syslogListeners = new SyslogListeners(ctx, new SyslogListenersStore(db, box), ingest);
  await app.register(syslogListenerRoutes as never, { ctx, listeners: syslogListeners });
  await app.register(custodyRoutes as never, { custody: ctx.custody });
  const importsStore = new ImportsStore(db);
  const imports = new Imports(ctx, importsStore, new ImportRunner(ctx, ingest, importsStore));
  await app.register(importRoutes as never, { imports });
  await app.register(uiRoutes);

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    // Start-up fails as a whole: what is accepted is stored, and the engine, the spool and the
    // database are released, so the desktop shell can start again in this same process.
    await app.close().catch(() => undefined);
    await imports.runner.stop();
    await ctx.archive.stop();
    await ingest.stop();
    await ctx.retention.stop();
    await ch.close();
    db.close();
    throw new Error(`SVC_PORT ${config.port} on ${config.host} cannot be used: ${(err as Error).message}`, { cause: err });
  }
  // After the spool replay was queued: its logs hold the engine's windows back until stored.
  const alertEngine = new AlertEngine(ctx, ingest, { concurrency: 4, deliverySlots: 4, retryBackoffMs: 1000 });
  alertEngine.start();
  // Imports a stop interrupted resume now that the alerts can run over them when they end.
  imports.runner.alerts = alertEngine;
  imports.runner.resumeAll();
  ctx.feedScheduler.start();
  await syslogListeners.startAll();
  const port = (app.server.address() as { port: number }).port;
  let metricsServer: Server | null = null;

  const localHost = dialable(config.host);
  let stopping: Promise<void> | null = null;
  const appliance: Appliance = {
    config,
    url: `http://${localHost}:${port}`,
    port,
    firstStart: first,
    context: ctx,
    ingest,
    alertEngine,
    routes,
    metricsUrl: null,
    async activity() {
      const stored = (await ctx.metrics.ingestStored.get()).values[0]?.value ?? 0;
      return {
        logsStored: stored,
        imports: importsStore.unfinished().map((i) => ({
          name: i.name,
          fractal: ctx.fractals.get(i.fractal_id)?.name ?? i.fractal_id,
          phase: i.phase,
          bytesRead: i.bytes_read,
          sizeBytes: i.size_bytes,
          eventsAccepted: i.accepted,
        })),
      };
    },
    stop() {
      stopping ??= (async () => {
        ctx.live.close(); // live-edit streams never end on their own: app.close() would wait for them
        await app.close(); // no new requests; then everything accepted goes into storage
        await syslogListeners.stopAll(); // what they read goes into the queue before it drains
        await caseJobs.stop(); // a running case import removes what it stored while storage is open
        ctx.feedScheduler.stop();
        await waitForSyncs(); // a sync holds the metadata store until it has recorded its outcome
        await imports.runner.stop(); // the batch in hand reaches the spool; the rest resumes at the next start
        await alertEngine.stop();
        await ctx.archive.stop(); // before the spool closes: a roll in flight finishes or stays for the next start
        await ingest.stop();
        await ctx.retention.stop();
        if (metricsServer) await new Promise((r) => metricsServer!.close(() => r(null)));
        await ch.close();
        db.close();
      })();
      return stopping;
    },
  };
  if (config.metricsEnabled) {
    try {
      metricsServer = await ctx.metrics.listen(config.metricsHost, config.metricsPort);
      appliance.metricsUrl = `http://${dialable(config.metricsHost)}:${(metricsServer.address() as AddressInfo).port}/metrics`;
    } catch (err) {
      // Start-up fails as a whole: release the API port, the engine and the database again.
      await appliance.stop();
      throw new Error(`SVC_METRICS_ADDR ${config.metricsHost}:${config.metricsPort} cannot be used: ${(err as Error).message}`, { cause: err });
    }
  }
  return appliance;
}

/** The address to reach a listener bound to `host` from this machine (a wildcard means loopback). */
function dialable(host: string): string {
  return ['0.0.0.0', '::', ''].includes(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}
