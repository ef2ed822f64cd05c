// Everything a route plugin may use, built once by appliance.ts. Routes call domain logic and
// stores from here; stores never call routes or each other's logic.
import type { FastifyBaseLogger } from 'fastify';
import type { ActionsStore } from './alerts/actions/actions-store.ts';
import type { AlertsStore } from './alerts/alerts-store.ts';
import type { ExecutionsStore } from './alerts/executions-store.ts';
import type { ArchiveService } from './archive/archive-logic.ts';
import type { ApiKeysStore } from './auth/api-keys-store.ts';
import type { LoginLimiter } from './auth/login-limiter.ts';
import type { RoleResolver } from './auth/roles.ts';
import type { SessionStore } from './auth/sessions.ts';
import type { UsersStore } from './auth/users-store.ts';
import type { CommentsStore } from './collaboration/comments-store.ts';
import type { Config } from './config.ts';
import type { DashboardsStore } from './dashboards/dashboards-store.ts';
import type { DashboardRuns } from './dashboards/widget-runs.ts';
import type { DictionariesStore } from './dictionaries/dictionaries-store.ts';
import type { CustodyStore } from './evidence/custody/custody-store.ts';
import type { IngestTokensStore } from './ingest/tokens-store.ts';
import type { LiveHub } from './live/hub.ts';
import type { LogStore } from './logs/log-store.ts';
import type { RetentionEnforcer } from './logs/retention.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { AiClient } from './notebooks/ai-client.ts';
import type { NotebooksStore } from './notebooks/notebooks-store.ts';
import type { FeedsStore } from './feeds/feeds-store.ts';
import type { FeedScheduler } from './feeds/scheduler.ts';
import type { NormalizerCache } from './normalizers/normalizer-cache.ts';
import type { NormalizersStore } from './normalizers/normalizers-store.ts';
import type { SettingsStore } from './settings/settings-store.ts';
import type { Analytics } from './storage/clickhouse.ts';
import type { Db } from './storage/sqlite.ts';
import type { FractalsStore } from './tenancy/fractals-store.ts';
import type { GroupsStore } from './tenancy/groups-store.ts';
import type { PermissionsStore } from './tenancy/permissions-store.ts';
import type { PrismsStore } from './tenancy/prisms-store.ts';

export interface Context {
  config: Config;
  log: FastifyBaseLogger;
  version: string;
  startedAt: Date;
  db: Db;
  ch: Analytics;
  metrics: Metrics;
  users: UsersStore;
  sessions: SessionStore;
  loginLimiter: LoginLimiter;
  apiKeys: ApiKeysStore;
  roles: RoleResolver;
  fractals: FractalsStore;
  prisms: PrismsStore;
  groups: GroupsStore;
  permissions: PermissionsStore;
  ingestTokens: IngestTokensStore;
  normalizers: NormalizersStore;
  /** Compiled normalizers for ingest and feeds (dropped on any normalizer change). */
  normalizerCache: NormalizerCache;
  logs: LogStore;
  retention: RetentionEnforcer;
  settings: SettingsStore;
  comments: CommentsStore;
  dictionaries: DictionariesStore;
  /** The live-edit channels of notebooks and dashboards (SSE with resumable ids, presence). */
  live: LiveHub;
  notebooks: NotebooksStore;
  dashboards: DashboardsStore;
  /** Runs dashboard widgets a few at a time for the whole appliance, shares runs and public answers. */
  dashboardRuns: DashboardRuns;
  /** The OpenAI-compatible model of SVC_AI_* (notebook summaries); `enabled` false without one. */
  ai: AiClient;
  alerts: AlertsStore;
  alertActions: ActionsStore;
  alertExecutions: ExecutionsStore;
  feeds: FeedsStore;
  /** The archive tier (Parquet + Iceberg): capture from the spool, status, restore, search in place. */
  archive: ArchiveService;
  /** Scheduled feed syncs (started by appliance.ts once the service listens). */
  feedScheduler: FeedScheduler;
  /** The append-only, hash-chained custody log of each fractal (imports, exports, case imports). */
  custody: CustodyStore;
}
