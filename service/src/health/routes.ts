// Health, status and version. /health is unauthenticated and says "healthy" only when both
// stores answer, so container and load-balancer checks mean something.
import { redactedUrl } from '../config.ts';
import type { Context } from '../context.ts';
import { ok } from '../http/envelope.ts';
import type { App } from '../http/app.ts';

function sqliteOk(ctx: Context): boolean {
  try {
    return (ctx.db.prepare('SELECT 1 AS ok').get() as { ok: number }).ok === 1;
  } catch {
    return false;
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, Math.round((performance.now() - t0) * 100) / 100];
}

export async function healthRoutes(app: App, ctx: Context) {
  app.get('/api/v1/health', { config: { access: { public: true } } }, async (_req, reply) => {
    const healthy = sqliteOk(ctx) && (await ctx.ch.ping());
    return reply.code(healthy ? 200 : 503).send({
      success: healthy,
      status: healthy ? 'healthy' : 'unhealthy',
      // An error answer carries its sentence like every other (conventions.md, response envelope).
      ...(healthy ? {} : { error: 'A storage engine does not answer; GET /api/v1/status shows which one.' }),
    });
  });

  app.get('/api/v1/health/clickhouse', { config: { access: { authenticated: true } } }, async (_req, reply) => {
    const [up, latency] = await timed(() => ctx.ch.ping());
    return reply.code(up ? 200 : 503).send({
      success: up,
      data: { status: up ? 'healthy' : 'unreachable', transport: ctx.ch.transport, latency_ms: latency },
      ...(up ? {} : { error: 'ClickHouse does not answer; check SVC_CLICKHOUSE_URL or the data directory.' }),
    });
  });

  app.get('/api/v1/status', { config: { access: { authenticated: true } } }, async (req) => {
    // Where the engine lives is for global administrators, and never with its credentials.
    const p = req.principal;
    const admin = p?.kind === 'user' && p.user.is_admin === 1;
    const [chUp, chLatency] = await timed(() => ctx.ch.ping());
    const [sqlUp, sqlLatency] = await timed(async () => sqliteOk(ctx));
    return ok({
      status: chUp && sqlUp ? 'healthy' : 'degraded',
      version: ctx.version,
      uptime_s: Math.round((Date.now() - ctx.startedAt.getTime()) / 1000),
      clickhouse: {
        status: chUp ? 'healthy' : 'unreachable',
        transport: ctx.ch.transport,
        database: ctx.ch.database,
        ...(admin && ctx.config.clickhouse ? { url: redactedUrl(ctx.config.clickhouse.url) } : {}),
        latency_ms: chLatency,
      },
      sqlite: { status: sqlUp ? 'healthy' : 'unreachable', latency_ms: sqlLatency },
    });
  });

  app.get('/api/v1/version', { config: { access: { authenticated: true } } }, async () =>
    ok({ version: ctx.version, api: 'v1', node: process.version }),
  );
}
