// What clients of the search-engine bulk format ask before they send: cluster info at `GET /`
// and `HEAD /`, the license, templates, lifecycle policies, data streams, node and health info.
// The answers are plausible and acknowledging (nothing is configured by them) so that shippers
// such as Filebeat, Logstash, Vector, Fluent Bit, Velociraptor and the official clients start up
// and go on to `/_bulk`.
//
// Credentials on the read probes are optional: a request without any is answered (health checks
// and version detection need no secret, and the answers reveal nothing about stored data), but a
// request that presents a credential must present a valid ingest token, so a misconfigured
// shipper fails at start-up with 401 instead of at its first batch. Every write (PUT/POST of
// templates, policies, pipelines, data streams, indices) needs the ingest token, checked by the
// ingest scope before the body is read; what it keeps is small and per fractal (Echoes).
//
// `GET /` is shared with the web UI: a browser navigating to `/` (Accept with text/html) gets the
// UI, anything that looks like a client of this format gets the cluster info. That choice is a
// route constraint (looksLikeEsClient), so the UI's catch-all route keeps serving browsers
// without knowing about this module.
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { presentedCredential } from '../../auth/access.ts';
import type { App } from '../../http/app.ts';
import { HttpError } from '../../http/errors.ts';
import { bodyError, type IngestDeps } from '../plugin.ts';

/** The version these endpoints claim: a current 8.x, which every 7.x/8.x shipper accepts. */
const ES_VERSION = {
  number: '8.19.0',
  build_flavor: 'default',
  build_type: 'tar',
  build_hash: '0000000000000000000000000000000000000000',
  build_date: '2025-07-01T00:00:00.000Z',
  build_snapshot: false,
  lucene_version: '9.12.2',
  minimum_wire_compatibility_version: '7.17.0',
  minimum_index_compatibility_version: '7.0.0',
};
const CLUSTER_NAME = 'log-appliance';
const TAGLINE = 'You Know, for Search';

// ---- request classification ----------------------------------------------------------------

/**
 * True when a request to `/` comes from a client of the search-engine format rather than a
 * browser: it carries the official clients' meta header, or asks for the format's media type,
 * or does not ask for HTML at all (curl, Beats, Logstash, Vector, Go and Java clients).
 * A browser navigation always sends Accept with text/html, even behind a proxy that adds
 * an Authorization header, so it keeps getting the UI.
 */
function looksLikeEsClient(req: { headers: Record<string, string | string[] | undefined> }): boolean {
  if (req.headers['x-elastic-client-meta'] !== undefined) return true;
  const accept = String(req.headers.accept ?? '').toLowerCase();
  if (accept.includes('vnd.elasticsearch')) return true;
  return !accept.includes('text/html');
}

const ES_CLIENT_CONSTRAINT = 'esClient';

/** Registers the route constraint `{ esClient: 'yes' }` once per router. */
function ensureEsClientConstraint(app: App): void {
  if (app.hasConstraintStrategy(ES_CLIENT_CONSTRAINT)) return;
  app.addConstraintStrategy({
    name: ES_CLIENT_CONSTRAINT,
    storage() {
      const handlers = new Map<string, unknown>();
      return {
        get: (value: string) => (handlers.get(value) ?? null) as never,
        set: (value: string, store: unknown) => void handlers.set(value, store),
      };
    },
    deriveConstraint: (req: FastifyRequest['raw']) => (looksLikeEsClient(req) ? 'yes' : 'no'),
    // Routes without this constraint (the UI's catch-all) still match every request.
    mustMatchWhenDerived: false,
  } as never);
}

// ---- responses in the format's shape ---------------------------------------------------------

/** Marks every response of the scope as coming from the product the clients check for. */
export function markProduct(app: App): void {
  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('X-Elastic-Product', 'Elasticsearch');
    const ct = reply.getHeader('content-type');
    if (typeof ct === 'string' && ct.startsWith('application/json') && wantsCompat(req)) {
      reply.header('content-type', compatContentType(req));
    }
    return payload;
  });
}

/** A client that asked for `compatible-with=N` gets the same media type back, as the original does. */
function wantsCompat(req: FastifyRequest): boolean {
  return String(req.headers.accept ?? '').includes('vnd.elasticsearch+json');
}
function compatContentType(req: FastifyRequest): string {
  const m = /compatible-with=(\d+)/.exec(String(req.headers.accept ?? ''));
  return `application/vnd.elasticsearch+json;compatible-with=${m ? m[1] : '8'}`;
}

export function esErrorBody(status: number, type: string, reason: string) {
  return { error: { root_cause: [{ type, reason }], type, reason }, status };
}

function typeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'illegal_argument_exception';
    case 401:
    case 403:
      return 'security_exception';
    case 404:
      return 'resource_not_found_exception';
    case 413:
      return 'content_too_long_exception';
    case 415:
      return 'media_type_header_exception';
    case 429:
      return 'es_rejected_execution_exception';
    default:
      return status >= 500 ? 'exception' : 'illegal_argument_exception';
  }
}

const CHALLENGES = ['Basic realm="security", charset="UTF-8"', 'Bearer realm="security"', 'ApiKey'];

/**
 * Answers every error of the scope in the format's error shape, keeping the status and any
 * headers (Retry-After on 429). Replaces the ingest scope's envelope errors for these routes.
 */
export function esErrorHandler(app: App, maxBodySize: number): void {
  app.setErrorHandler((err: Error & { code?: string; statusCode?: number; headers?: Record<string, string> }, req, reply) => {
    let status: number;
    let reason: string;
    let type: string | undefined;
    const refused = bodyError(err, maxBodySize);
    if (err instanceof HttpError) {
      status = err.statusCode;
      reason = err.message;
      reply.headers(err.headers);
    } else if (refused) {
      status = refused.status;
      reason = refused.message;
      if (status === 400) type = 'parse_exception';
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      reason = err.message;
    } else {
      req.log.error({ err }, 'request failed');
      status = 500;
      reason = 'Internal error; the service log has the details.';
    }
    if (status === 401) reply.header('WWW-Authenticate', CHALLENGES);
    return reply.code(status).send(esErrorBody(status, type ?? typeForStatus(status), reason));
  });
}

/** Optional credentials: none is fine, but one that is presented must be a valid ingest token. */
function checkOptionalToken(deps: IngestDeps) {
  return async (req: FastifyRequest) => {
    if (presentedCredential(req) !== undefined) req.ingestToken = deps.pipeline.authenticate(req);
  };
}

// ---- the probe routes ----------------------------------------------------------------------

/** A write probe's body limit: shippers' index templates carry their whole field mappings. */
const PROBE_BODY_LIMIT = 8 * 1024 * 1024;
/** What is kept of one body: the whole body up to this size, else only its small top-level keys. */
const KEPT_BYTES = 16 * 1024;
/** Names kept per kind and fractal; the oldest goes first. */
const KEPT_NAMES = 100;
/** The keys of a template or policy a client may read back, when the whole body is too big to keep. */
const SUMMARY_KEYS = ['index_patterns', 'priority', 'order', 'version', 'composed_of', 'data_stream', 'policy'];

/**
 * Bounded memory of what shippers PUT, so a GET shows it back. Nothing acts on it. Kept per
 * fractal (the writing token's), at most KEPT_NAMES names per kind and KEPT_BYTES per body.
 */
class Echoes {
  private readonly maps = new Map<string, Map<string, unknown>>();
  private key(fractalId: string | undefined, kind: string): string {
    return `${fractalId ?? ''}/${kind}`;
  }
  get(fractalId: string | undefined, kind: string, name: string): unknown {
    return fractalId === undefined ? undefined : this.maps.get(this.key(fractalId, kind))?.get(name);
  }
  all(fractalId: string | undefined, kind: string): Array<[string, unknown]> {
    return fractalId === undefined ? [] : [...(this.maps.get(this.key(fractalId, kind)) ?? new Map()).entries()];
  }
  put(fractalId: string, kind: string, name: string, body: unknown): void {
    const key = this.key(fractalId, kind);
    let m = this.maps.get(key);
    if (!m) this.maps.set(key, (m = new Map()));
    if (!m.has(name) && m.size >= KEPT_NAMES) m.delete(m.keys().next().value as string);
    m.set(name.slice(0, 255), body);
  }
}

/** The part of a write probe's JSON body worth keeping (see KEPT_BYTES); {} when it is no JSON object. */
function keptBody(req: FastifyRequest): Record<string, unknown> {
  const b = req.body;
  if (!Buffer.isBuffer(b) || b.length === 0) return {};
  let v: unknown;
  try {
    v = JSON.parse(b.toString('utf8'));
  } catch {
    return {};
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  if (b.length <= KEPT_BYTES) return v as Record<string, unknown>;
  const summary: Record<string, unknown> = {};
  for (const k of SUMMARY_KEYS) {
    const part = (v as Record<string, unknown>)[k];
    if (part !== undefined && JSON.stringify(part).length <= KEPT_BYTES / SUMMARY_KEYS.length) summary[k] = part;
  }
  return summary;
}

/** The fractal whose echoes a probe reads or writes: that of the token it presented, if any. */
const fractalOf = (req: FastifyRequest): string | undefined => req.ingestToken?.fractalId;

/** Stable per data directory, in the format's 22-character style. */
function clusterUuid(dataDir: string): string {
  return createHash('sha256').update(`cluster:${dataDir}`).digest('base64url').slice(0, 22);
}

/** The probe routes; the caller's scope has markProduct and esErrorHandler. */
export async function esCompatRoutes(app: App, deps: IngestDeps): Promise<void> {
  ensureEsClientConstraint(app);

  const uuid = clusterUuid(deps.ctx.config.dataDir);
  const nodeId = createHash('sha256').update(`node:${deps.ctx.config.dataDir}`).digest('base64url').slice(0, 22);
  const nodeName = hostname() || 'log-appliance';
  const licenseUid = randomUUID();
  const started = deps.ctx.startedAt.getTime();
  const echoes = new Echoes();

  const probe = { access: { public: true } } as const;
  const onRequest = checkOptionalToken(deps);
  const opts = { config: probe, onRequest };
  // Writes: the ingest scope authenticates and admits them before their body is read.
  const write = { config: { access: { ingest: true } } as const, bodyLimit: PROBE_BODY_LIMIT };
  const ack = { acknowledged: true };
  const nowIso = () => new Date().toISOString();

  // Cluster info. Auto-HEAD gives `HEAD /` (ping) with the same constraint.
  app.get('/', { ...opts, constraints: { [ES_CLIENT_CONSTRAINT]: 'yes' } }, async (_req, reply) => {
    reply.header('vary', 'Accept');
    return { name: nodeName, cluster_name: CLUSTER_NAME, cluster_uuid: uuid, version: ES_VERSION, tagline: TAGLINE };
  });

  app.get('/_license', opts, async () => ({
    license: {
      status: 'active',
      uid: licenseUid,
      type: 'basic',
      issue_date: new Date(started).toISOString(),
      issue_date_in_millis: started,
      max_nodes: 1000,
      max_resource_units: null,
      issued_to: CLUSTER_NAME,
      issuer: 'elasticsearch',
      start_date_in_millis: -1,
    },
  }));

  app.get('/_xpack', opts, async () => {
    const on = { available: true, enabled: true };
    return {
      build: { hash: ES_VERSION.build_hash, date: ES_VERSION.build_date },
      license: { uid: licenseUid, type: 'basic', mode: 'basic', status: 'active' },
      features: { ilm: on, slm: on, monitoring: on, data_streams: on, security: { available: true, enabled: false }, ml: { available: false, enabled: false } },
      tagline: 'You know, for X',
    };
  });

  // Index templates (composable), legacy templates and component templates.
  app.get('/_index_template', opts, async (req) => ({
    index_templates: echoes.all(fractalOf(req), 'index_template').map(([name, t]) => ({ name, index_template: t })),
  }));
  app.get<{ Params: { name: string } }>('/_index_template/:name', opts, async (req) => ({
    index_templates: req.params.name.split(',').map((name) => ({
      name,
      index_template: echoes.get(fractalOf(req), 'index_template', name) ?? {
        index_patterns: [`${name}*`],
        composed_of: [],
        template: { settings: {}, mappings: {} },
        data_stream: { hidden: false, allow_custom_routing: false },
      },
    })),
  }));
  /** Keeps a write's body (bounded) under the token's fractal and acknowledges it. */
  const keep = (kind: string) => async (req: FastifyRequest<{ Params: { name: string } }>) => {
    echoes.put(req.ingestToken!.fractalId, kind, req.params.name, keptBody(req));
    return ack;
  };
  for (const method of ['PUT', 'POST'] as const) {
    app.route({ method, url: '/_index_template/:name', ...write, handler: keep('index_template') });
    app.route({ method, url: '/_template/:name', ...write, handler: keep('template') });
    app.route({ method, url: '/_component_template/:name', ...write, handler: keep('component_template') });
  }
  app.get('/_template', opts, async (req) => Object.fromEntries(echoes.all(fractalOf(req), 'template')));
  app.get<{ Params: { name: string } }>('/_template/:name', opts, async (req) =>
    Object.fromEntries(
      req.params.name.split(',').map((name) => [
        name,
        echoes.get(fractalOf(req), 'template', name) ?? { order: 0, index_patterns: [`${name}*`], settings: {}, mappings: {}, aliases: {} },
      ]),
    ),
  );
  app.get<{ Params: { name: string } }>('/_component_template/:name', opts, async (req) => ({
    component_templates: req.params.name.split(',').map((name) => ({
      name,
      component_template: echoes.get(fractalOf(req), 'component_template', name) ?? { template: { settings: {}, mappings: {} } },
    })),
  }));

  // Index lifecycle management.
  const policyOut = (req: FastifyRequest, name: string) => {
    const stored = echoes.get(fractalOf(req), 'ilm_policy', name) as { policy?: unknown } | undefined;
    return {
      version: 1,
      modified_date: new Date(started).toISOString(),
      policy: stored?.policy ?? { phases: { hot: { min_age: '0ms', actions: {} } } },
      in_use_by: { indices: [], data_streams: [], composable_templates: [] },
    };
  };
  app.get('/_ilm/policy', opts, async (req) => Object.fromEntries(echoes.all(fractalOf(req), 'ilm_policy').map(([n]) => [n, policyOut(req, n)])));
  app.get<{ Params: { name: string } }>('/_ilm/policy/:name', opts, async (req) =>
    Object.fromEntries(req.params.name.split(',').map((n) => [n, policyOut(req, n)])),
  );
  app.put('/_ilm/policy/:name', write, keep('ilm_policy'));
  app.get('/_ilm/status', opts, async () => ({ operation_mode: 'RUNNING' }));
  app.get('/_ilm/*', opts, async () => ({}));

  // Data streams.
  const streamOut = (name: string) => ({
    name,
    timestamp_field: { name: '@timestamp' },
    indices: [],
    generation: 1,
    status: 'GREEN',
    template: name,
    ilm_policy: name,
    hidden: false,
    system: false,
    allow_custom_routing: false,
    replicated: false,
  });
  app.get('/_data_stream', opts, async (req) => ({ data_streams: echoes.all(fractalOf(req), 'data_stream').map(([n]) => streamOut(n)) }));
  app.get<{ Params: { name: string } }>('/_data_stream/:name', opts, async (req) => ({
    data_streams: req.params.name.split(',').map(streamOut),
  }));
  app.put<{ Params: { name: string } }>('/_data_stream/:name', write, async (req) => {
    echoes.put(req.ingestToken!.fractalId, 'data_stream', req.params.name, {});
    return ack;
  });

  // Ingest pipelines (Filebeat modules install them; they are acknowledged, not run).
  app.get<{ Params: { name: string } }>('/_ingest/pipeline/:name', opts, async (req) =>
    Object.fromEntries(
      req.params.name.split(',').map((id) => [id, echoes.get(fractalOf(req), 'pipeline', id) ?? { description: '', processors: [] }]),
    ),
  );
  app.put('/_ingest/pipeline/:name', write, keep('pipeline'));

  // Nodes and cluster health.
  const nodesOut = (req: FastifyRequest) => {
    const address = req.headers.host ?? `127.0.0.1:${deps.ctx.config.port}`;
    return {
      _nodes: { total: 1, successful: 1, failed: 0 },
      cluster_name: CLUSTER_NAME,
      nodes: {
        [nodeId]: {
          name: nodeName,
          transport_address: address,
          host: address.replace(/:\d+$/, ''),
          ip: address.replace(/:\d+$/, ''),
          version: ES_VERSION.number,
          build_flavor: ES_VERSION.build_flavor,
          build_type: ES_VERSION.build_type,
          build_hash: ES_VERSION.build_hash,
          roles: ['data', 'ingest', 'master'],
          attributes: {},
          http: { bound_address: [address], publish_address: address, max_content_length_in_bytes: deps.ctx.config.maxBodySize },
        },
      },
    };
  };
  app.get('/_nodes', opts, async (req) => nodesOut(req));
  app.get('/_nodes/*', opts, async (req) => nodesOut(req));
  const health = async () => ({
    cluster_name: CLUSTER_NAME,
    status: 'green',
    timed_out: false,
    number_of_nodes: 1,
    number_of_data_nodes: 1,
    active_primary_shards: 0,
    active_shards: 0,
    relocating_shards: 0,
    initializing_shards: 0,
    unassigned_shards: 0,
    unassigned_primary_shards: 0,
    delayed_unassigned_shards: 0,
    number_of_pending_tasks: 0,
    number_of_in_flight_fetch: 0,
    task_max_waiting_in_queue_millis: 0,
    active_shards_percent_as_number: 100.0,
  });
  app.get('/_cluster/health', opts, health);
  app.get('/_cluster/health/*', opts, health);

  // Any other `/_…` read from a client: a 404 in the format's shape (with the product header),
  // rather than the UI's HTML, which a client would take for a foreign product.
  app.get('/_*', { ...opts, constraints: { [ES_CLIENT_CONSTRAINT]: 'yes' } }, async (req) => {
    throw new HttpError(404, `No handler found for uri [${req.url.split('?')[0]}] and method [GET]; this log appliance answers /_bulk and the probes shippers make at start-up.`);
  });

  // Indices: `HEAD /{index}` says it exists (Logstash checks its rollover alias), `PUT /{index}`
  // acknowledges creation. HEAD is constrained like `GET /` so browsers' HEAD requests for UI
  // pages still reach the UI.
  app.head<{ Params: { index: string } }>(
    '/:index',
    { ...opts, constraints: { [ES_CLIENT_CONSTRAINT]: 'yes' } },
    async (_req, reply: FastifyReply) => reply.code(200).type('application/json').send(),
  );
  app.put<{ Params: { index: string } }>('/:index', write, async (req) => {
    const index = req.params.index;
    if (index.startsWith('_')) throw new HttpError(400, `Invalid index name [${index}], must not start with '_'.`);
    return { acknowledged: true, shards_acknowledged: true, index };
  });
}
