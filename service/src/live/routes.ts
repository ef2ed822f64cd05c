// The HTTP face of the live-edit hub (hub.ts) for one kind of document. A domain declares it once:
//
//   liveRoutes(app, ctx.live, {
//     kind: 'notebook',
//     path: '/api/v1/notebooks/:id',
//     authorize: (req, id) => { readableNotebook(ctx, req.principal!, id); },  // 404/403 like a GET of it
//   });
//
// and gets, for every document of that kind:
//   GET  <path>/events    text/event-stream. First `ready` {presence}; then every change as an event
//                         named by its type, with `id: <boot>-<seq>` and data {at, origin, data}.
//                         Send `Last-Event-ID` (header, as EventSource does, or ?last_event_id=) to
//                         resume: the missed events come first, or `resync` {reason} (id = where to
//                         carry on from) when they are no longer kept: reload the document then.
//                         `presence` (no id) whenever who is there changes; `: keep-alive` comments.
//                         After the document's last event (it was deleted) comes `end` and the
//                         stream closes: do not reconnect. A stream closed without `end` (the
//                         service stopping, a network cut) is resumed by reconnecting.
//   GET  <path>/presence  who has it open: [{name, kind, clients, since, last_seen}]
//   POST <path>/presence  a beat {client_id?, leaving?}: counts for presenceTtlMs (25 s); answers the list
//
// A writer passes its client id in the X-Live-Client header (originOf) so that the events it causes
// say so in `origin`, and its own page can tell its echo from others' edits.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../http/app.ts';
import { ok } from '../http/envelope.ts';
import { IdParams } from '../http/schemas.ts';
import { openEventStream } from '../http/sse.ts';
import type { LiveHub, LiveMessage, PresenceIdentity } from './hub.ts';

export interface LiveDocument {
  /** Names the channel family: "notebook", "dashboard". */
  kind: string;
  /** The document's own path, with `:id`: "/api/v1/notebooks/:id". */
  path: string;
  /** Throws the answer (404, 403) a reader of this document without the right to read it gets. */
  authorize(req: FastifyRequest, id: string): void | Promise<void>;
}

/** The writer's client id (X-Live-Client), echoed in the events it causes; undefined when absent or odd. */
export function originOf(req: FastifyRequest): string | undefined {
  const v = req.headers['x-live-client'];
  return typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v) ? v : undefined;
}

function identityOf(req: FastifyRequest): PresenceIdentity {
  const p = req.principal!;
  return p.kind === 'user'
    ? { key: `user:${p.user.id}`, name: p.user.username, kind: 'user' }
    : { key: `key:${p.key.id}`, name: p.key.name, kind: 'api_key' };
}

/** A reader that writes too slowly is cut off past this many buffered bytes; it resumes by reconnecting. */
const MAX_BUFFERED = 4 * 1024 * 1024;

export function liveRoutes(app: App, hub: LiveHub, doc: LiveDocument): void {
  const access = { access: { authenticated: true as const } };
  const Params = IdParams;

  app.get(
    `${doc.path}/events`,
    { config: access, schema: { params: Params, querystring: Type.Object({ last_event_id: Type.Optional(Type.String({ maxLength: 64 })) }) } },
    async (req, reply) => {
      const id = req.params.id.toLowerCase();
      await doc.authorize(req, id);
      const header = req.headers['last-event-id'];
      const lastEventId = (typeof header === 'string' && header !== '' ? header : req.query.last_event_id) || undefined;
      stream(reply, hub, doc.kind, id, lastEventId);
    },
  );

  app.get(`${doc.path}/presence`, { config: access, schema: { params: Params } }, async (req) => {
    const id = req.params.id.toLowerCase();
    await doc.authorize(req, id);
    return ok(hub.presence(doc.kind, id));
  });

  app.post(
    `${doc.path}/presence`,
    {
      config: access,
      schema: {
        params: Params,
        body: Type.Optional(
          Type.Object({
            client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' })),
            leaving: Type.Optional(Type.Boolean()),
          }),
        ),
      },
    },
    async (req) => {
      const id = req.params.id.toLowerCase();
      await doc.authorize(req, id);
      const body = req.body ?? {};
      return ok(hub.beat(doc.kind, id, identityOf(req), body.client_id ?? 'default', body.leaving === true));
    },
  );
}

function stream(reply: FastifyReply, hub: LiveHub, kind: string, id: string, lastEventId: string | undefined): void {
  const res = openEventStream(reply);
  res.socket?.setNoDelay(true);
  const write = (text: string) => {
    if (res.writableEnded || res.destroyed) return;
    res.write(text);
    if (res.writableLength > MAX_BUFFERED) res.destroy();
  };
  const data = (payload: unknown) => JSON.stringify({ at: new Date().toISOString(), origin: null, data: payload });
  const reader = (m: LiveMessage) => {
    if (!('end' in m)) return write(m.frame);
    // After the document's last event: `end`, so a client does not reconnect to nothing.
    if (m.end === 'gone') write(`event: end\ndata: ${data({ reason: 'gone' })}\n\n`);
    res.end();
  };
  const sub = hub.subscribe(kind, id, lastEventId, reader);
  res.on('close', sub.unsubscribe);
  // A browser retries after 2 s when the connection drops, sending the last id it saw.
  let head = 'retry: 2000\n\n';
  if (sub.replay === null) {
    const reason = lastEventId && lastEventId.startsWith(`${hub.boot}-`) ? 'too-old' : 'unknown-id';
    head += `id: ${sub.cursor}\nevent: resync\ndata: ${data({ reason })}\n\n`;
  }
  // A reader from nowhere starts at the newest id, so that a reconnect resumes from there.
  const readyId = lastEventId === undefined ? `id: ${sub.cursor}\n` : '';
  head += `${readyId}event: ready\ndata: ${data({ presence: sub.presence })}\n\n`;
  for (const e of sub.replay ?? []) head += e.frame;
  write(head);
}
