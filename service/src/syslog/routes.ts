// /api/v1/syslog-listeners (conventions.md "Syslog listeners"), global admins only. Additions to
// the spec: `time_zone` (RFC 3164 times are read in it, default UTC) and, in answers, the token's
// name, fractal and parser, the listener's status and its counters (also in Prometheus metrics).
import { Type } from 'typebox';
import type { Context } from '../context.ts';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { IdParams, Name, StringEnum, Uuid } from '../http/schemas.ts';
import type { SyslogListeners } from './listeners-logic.ts';

const Pem = Type.String({ minLength: 1, maxLength: 200_000 });
const Fields = {
  name: Name,
  protocol: StringEnum(['udp', 'tcp', 'tls'] as const),
  bind_address: Type.String({ minLength: 1, maxLength: 100 }),
  port: Type.Integer({ minimum: 0, maximum: 65_535 }),
  ingest_token_id: Uuid,
  tls_cert: Pem,
  tls_key: Pem,
  time_zone: Type.String({ minLength: 1, maxLength: 64 }),
  enabled: Type.Boolean(),
};
const { name, protocol, port, ingest_token_id, ...optional } = Fields;
const CreateBody = Type.Object({ name, protocol, port, ingest_token_id, ...Type.Partial(Type.Object(optional)).properties }, { additionalProperties: false });
const UpdateBody = Type.Partial(Type.Object(Fields, { additionalProperties: false }));
const admin = { access: { globalAdmin: true as const } };

export async function syslogListenerRoutes(app: App, { listeners }: { ctx: Context; listeners: SyslogListeners }) {
  app.get('/api/v1/syslog-listeners', { config: admin }, async () => ok(listeners.list()));

  app.post('/api/v1/syslog-listeners', { config: admin, schema: { body: CreateBody } }, async (req, reply) =>
    reply.code(201).send(ok(await listeners.create(req.body))),
  );

  app.get('/api/v1/syslog-listeners/:id', { config: admin, schema: { params: IdParams } }, async (req) => ok(listeners.get(req.params.id)));

  app.put('/api/v1/syslog-listeners/:id', { config: admin, schema: { params: IdParams, body: UpdateBody } }, async (req) =>
    ok(await listeners.update(req.params.id, req.body)),
  );

  app.delete('/api/v1/syslog-listeners/:id', { config: admin, schema: { params: IdParams } }, async (req) => {
    await listeners.remove(req.params.id);
    return ok({ deleted: true });
  });
}
