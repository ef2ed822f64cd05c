// The UI's live-stream client (renderer/src/lib/live/live-client.ts) against a real appliance over
// real HTTP, in Node with a transport that carries a session cookie: it resumes from the id handed
// out with the document, beats presence and tells when others come and go, asks for a reload when
// its id is unknown, comes back after the service cut its stream (missing nothing), and stops for
// good when the document is deleted or cannot be read.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, makeUser, signIn, startTestAppliance, type Client, type TestAppliance } from '../support/appliance.ts';
import { expectOk } from '../support/api.ts';
import { LiveConnection, newClientId, type LiveEnvelope, type LiveStatus, type LiveTransport, type PresenceEntry } from '../../renderer/src/lib/live/live-client.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
let ben: Client;

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  ben = await makeUser(admin, 'ben');
});
after(async () => {
  await app?.dispose();
});

/** Requests as the UI's send() makes them, from Node with the client's cookie. */
const transportOf =
  (c: Client): LiveTransport =>
  (method, path, opts) =>
    fetch(`${c.base}/api/v1${path}`, {
      method,
      headers: { accept: opts.accept ?? 'application/json', cookie: c.cookie, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });

interface Watch {
  live: LiveConnection;
  events: Array<{ type: string; env: LiveEnvelope }>;
  statuses: LiveStatus[];
  presence: PresenceEntry[][];
  resyncs: number;
  closed: Array<{ status: number; message: string }>;
}

function watch(c: Client, id: string, lastEventId?: string): Watch {
  const w: Watch = { events: [], statuses: [], presence: [], resyncs: 0, closed: [] } as unknown as Watch;
  w.live = new LiveConnection({
    path: `/notebooks/${id}`,
    lastEventId,
    clientId: newClientId(),
    transport: transportOf(c),
    beatMs: 200,
    retryMs: [50],
    onEvent: (type, env) => w.events.push({ type, env }),
    onResync: () => w.resyncs++,
    onPresence: (list) => w.presence.push(list),
    onStatus: (s) => w.statuses.push(s),
    onClosed: (why) => w.closed.push(why),
  });
  w.live.start();
  return w;
}

const until = (cond: () => boolean, what: string): Promise<unknown> => waitFor(what, cond);

test('resumes from the document’s id, hears edits and presence, survives a cut stream without a gap', async () => {
  const nb = expectOk(await admin.post('/api/v1/notebooks', { name: 'Live client' }), 201);
  // An edit between reading the notebook and opening the stream is not lost.
  const early = expectOk(await admin.post(`/api/v1/notebooks/${nb.id}/sections`, { section_type: 'markdown', content: 'early' }), 201);
  const w = watch(admin, nb.id, nb.live_event_id);
  await until(() => w.live.status === 'live', 'live');
  await until(() => w.events.some((e) => e.type === 'section_added'), 'the early edit');
  assert.equal(w.events[0]!.env.data.section.id, early.id);

  // Presence: our own beat, then a second tab of the same user is heard of.
  await until(() => w.presence.some((p) => p.some((e) => e.name === 'admin')), 'own presence');
  expectOk(await admin.post(`/api/v1/notebooks/${nb.id}/presence`, { client_id: 'second-tab' }));
  await until(() => w.presence.at(-1)?.[0]?.clients === 2, 'two tabs');

  // The service cuts every stream (as when it stops); edits happen meanwhile; the client comes back.
  const before = w.events.length;
  app.context.live.close();
  await until(() => w.statuses.includes('reconnecting'), 'reconnecting');
  expectOk(await admin.put(`/api/v1/notebooks/${nb.id}/sections/${early.id}`, { version: 1, content: 'while cut' }));
  await until(() => w.events.length > before, 'the edit made while the stream was down');
  assert.equal(w.events.at(-1)!.type, 'section_updated');
  assert.equal(w.events.at(-1)!.env.data.section.content, 'while cut');
  assert.equal(w.live.status, 'live');
  assert.equal(w.resyncs, 0, 'nothing was missed, so no reload');

  // Deleted: the stream ends for good.
  expectOk(await admin.del(`/api/v1/notebooks/${nb.id}`));
  await until(() => w.closed.length === 1, 'closed');
  assert.deepEqual(w.closed[0], { status: 0, message: 'The service ended the live stream.' });
  assert.equal(w.events.at(-1)!.type, 'notebook_deleted');
  assert.equal(w.live.status, 'closed');
});

test('an id the service does not know asks for a reload; a notebook one may not read closes with its sentence', async () => {
  const nb = expectOk(await admin.post('/api/v1/notebooks', { name: 'Resync' }), 201);
  const w = watch(admin, nb.id, 'cafe00-12');
  await until(() => w.resyncs === 1 && w.live.status === 'live', 'resync then live');
  w.live.stop();

  const denied = watch(ben, nb.id);
  await until(() => denied.closed.length === 1, 'refused');
  assert.equal(denied.closed[0]!.status, 404);
  assert.match(denied.closed[0]!.message, /^Notebook .* not found\.$/);
});
