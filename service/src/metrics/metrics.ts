// Prometheus metrics: one registry per appliance (tests start several in one process), process
// metrics, and request counts and latencies by route. Served on its own listener at /metrics.
import { createServer, type Server } from 'node:http';
import client from 'prom-client';
import type { App } from '../http/app.ts';

export class Metrics {
  readonly registry = new client.Registry();
  readonly httpRequests = new client.Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new client.Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly ingestAccepted = new client.Counter({
    name: 'svc_ingest_accepted_total',
    help: 'Log records accepted (spooled and queued)',
    registers: [this.registry],
  });
  readonly ingestStored = new client.Counter({
    name: 'svc_ingest_stored_total',
    help: 'Log records inserted into ClickHouse',
    registers: [this.registry],
  });
  readonly ingestRefused = new client.Counter({
    name: 'svc_ingest_refused_total',
    help: 'Log records or requests refused, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly ingestInsertSeconds = new client.Histogram({
    name: 'svc_ingest_insert_duration_seconds',
    help: 'Latency of one ClickHouse insert of coalesced batches',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly queries = new client.Counter({
    name: 'svc_queries_total',
    help: 'Queries run, by endpoint and outcome (ok, parse, translate, timeout, execution, cancelled)',
    labelNames: ['endpoint', 'outcome'],
    registers: [this.registry],
  });
  readonly queryDuration = new client.Histogram({
    name: 'svc_query_duration_seconds',
    help: 'Query execution time, parse to last row',
    labelNames: ['endpoint'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly queryRows = new client.Counter({
    name: 'svc_query_rows_total',
    help: 'Result rows returned by queries',
    labelNames: ['endpoint'],
    registers: [this.registry],
  });
  readonly syslogMessages = new client.Counter({
    name: 'svc_syslog_messages_total',
    help: 'Messages received by each syslog listener',
    labelNames: ['listener'] as const,
    registers: [this.registry],
  });
  readonly syslogBytes = new client.Counter({
    name: 'svc_syslog_bytes_total',
    help: 'Bytes received by each syslog listener',
    labelNames: ['listener'] as const,
    registers: [this.registry],
  });
  readonly syslogParseErrors = new client.Counter({
    name: 'svc_syslog_parse_errors_total',
    help: 'Syslog listener messages its parser could not read (stored as message when the parser is syslog)',
    labelNames: ['listener'] as const,
    registers: [this.registry],
  });
  readonly syslogDrops = new client.Counter({
    name: 'svc_syslog_drops_total',
    help: 'Syslog listener messages not stored (UDP beyond what waits for a full queue, oversized frames, a disabled token)',
    labelNames: ['listener'] as const,
    registers: [this.registry],
  });
  readonly ingestInsertFailures = new client.Counter({
    name: 'svc_ingest_insert_failures_total',
    help: 'ClickHouse inserts that failed and were retried',
    registers: [this.registry],
  });
  readonly ingestRowsStoredApart = new client.Counter({
    name: 'svc_ingest_rows_stored_apart_total',
    help: 'Rows ClickHouse refused for their data, stored with their text as message and the reason as ingest_error',
    registers: [this.registry],
  });

  /** Queue depth and spool size are read when scraped. */
  trackIngest(read: () => { depth: number; logs: number; bytes: number; spoolBytes: number }): void {
    new client.Gauge({
      name: 'svc_ingest_queue_depth',
      help: 'Batch slots of 5,000 logs in use (queued or being inserted)',
      registers: [this.registry],
      collect() {
        this.set(read().depth);
      },
    });
    new client.Gauge({
      name: 'svc_ingest_queue_logs',
      help: 'Logs admitted to the ingest queue and not yet inserted',
      registers: [this.registry],
      collect() {
        this.set(read().logs);
      },
    });
    new client.Gauge({
      name: 'svc_ingest_queue_bytes',
      help: 'Bytes of rows admitted to the ingest queue and not yet inserted (bounded by SVC_INGEST_QUEUE_BYTES)',
      registers: [this.registry],
      collect() {
        this.set(read().bytes);
      },
    });
    new client.Gauge({
      name: 'svc_ingest_spool_bytes',
      help: 'Bytes in the on-disk ingest spool',
      registers: [this.registry],
      collect() {
        this.set(read().spoolBytes);
      },
    });
  }

  /** The archive's lag and output, read when scraped. */
  trackArchive(read: () => { lagLogs: number; archivedLogs: number; faulty: boolean }): void {
    const gauge = (name: string, help: string, pick: (r: ReturnType<typeof read>) => number) =>
      new client.Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(pick(read()));
        },
      });
    gauge('svc_archive_lag_logs', 'Logs accepted and not yet committed to the archive', (r) => r.lagLogs);
    gauge('svc_archive_logs_archived', 'Logs committed to the archive since start', (r) => r.archivedLogs);
    gauge('svc_archive_fault', '1 while the archive cannot write (logs wait in the spool)', (r) => (r.faulty ? 1 : 0));
  }

  constructor() {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
  }

  /** Observes every request; the route label is the route pattern, never the raw URL. */
  instrument(app: App): void {
    app.addHook('onResponse', async (req, reply) => {
      const route = req.routeOptions.url ?? 'unmatched';
      this.httpRequests.inc({ method: req.method, route, status: String(reply.statusCode) });
      this.httpDuration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
    });
  }

  listen(host: string, port: number): Promise<Server> {
    const server = createServer(async (req, res) => {
      if (req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('metrics are served at /metrics\n');
        return;
      }
      res.writeHead(200, { 'content-type': this.registry.contentType }).end(await this.registry.metrics());
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  }
}
