// The live-edit mechanism on its own (service/src/live): event ids that only grow, replay after a
// reader's last id, `resync` when the events are no longer kept (or the id is from an earlier run),
// presence per user with expiry, the end of a document; then the same over real HTTP with a real SSE
// reader, through a small Fastify app that declares one kind of document with liveRoutes().
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '../support/appliance.ts';
import { LiveReader } from '../support/live.ts';
import { createHttpApp, type App } from '../../service/src/http/app.ts';
import { notFound } from '../../service/src/http/errors.ts';
import { LiveHub, type LiveMessage } from '../../service/src/live/hub.ts';
import { liveRoutes } from '../../service/src/live/routes.ts';
import { waitFor as waitUntil } from '../support/wait.ts';

const DOC = '6b1f8a52-37c1-4d0e-9a65-0d6f1c2b3a40';
const OTHER = '0c3c2f6e-52b0-4f7a-8d43-5f7c0a1e9b21';
const ALICE = { key: 'user:1', name: 'alice', kind: 'user' as const };
const BOB = { key: 'user:2', name: 'bob', kind: 'user' as const };

function collect() {
  const got: LiveMessage[] = [];
  return { got, reader: (m: LiveMessage) => got.push(m) };
}
const frames = (got: LiveMessage[]) => got.flatMap((m) => ('frame' in m ? [m.frame] : []));
const eventNames = (got: LiveMessage[]) => frames(got).map((f) => /event: (\S+)/.exec(f)?.[1]);

describe('LiveHub', () => {
  test('event ids grow across documents and carry the boot; a reader resumes exactly after its id', () => {
    const hub = new LiveHub();
    try {
      const a1 = hub.publish('doc', DOC, 'edited', { n: 1 });
      const b1 = hub.publish('doc', OTHER, 'edited', { n: 1 });
      const a2 = hub.publish('doc', DOC, 'edited', { n: 2 });
      const a3 = hub.publish('doc', DOC, 'moved', { n: 3 });
      assert.deepEqual([a1.seq, b1.seq, a2.seq, a3.seq], [1, 2, 3, 4]);
      assert.match(a1.id, new RegExp(`^${hub.boot}-1$`));
      const { got, reader } = collect();
      const sub = hub.subscribe('doc', DOC, a1.id, reader);
      assert.deepEqual(
        sub.replay!.map((e) => e.id),
        [a2.id, a3.id],
        'only this document’s events after the id, in order',
      );
      assert.equal(sub.cursor, a3.id);
      hub.publish('doc', DOC, 'edited', { n: 4 });
      hub.publish('doc', OTHER, 'edited', { n: 2 });
      assert.equal(frames(got).length, 1, 'a reader hears only its own document');
      assert.match(frames(got)[0]!, /^id: [0-9a-f]+-5\nevent: edited\ndata: \{"at":"[^"]+","origin":null,"data":\{"n":4\}\}\n\n$/);
      sub.unsubscribe();
      hub.publish('doc', DOC, 'edited', { n: 5 });
      assert.equal(frames(got).length, 1, 'nothing after unsubscribing');
    } finally {
      hub.close();
    }
  });

  test('an id older than the replay buffer, of another run, or from the future means resync', () => {
    const hub = new LiveHub({ replayEvents: 3 });
    try {
      const first = hub.publish('doc', DOC, 'edited', 1);
      const second = hub.publish('doc', DOC, 'edited', 2);
      for (let i = 3; i <= 5; i++) hub.publish('doc', DOC, 'edited', i);
      const noop = () => {};
      assert.equal(hub.subscribe('doc', DOC, first.id, noop).replay, null, 'event 2 was dropped: cannot resume after 1');
      assert.deepEqual(hub.subscribe('doc', DOC, second.id, noop).replay!.map((e) => e.seq), [3, 4, 5], 'after 2 all are kept');
      const foreignBoot = hub.boot === '000000' ? '000001' : '000000';
      assert.equal(hub.subscribe('doc', DOC, `${foreignBoot}-${second.seq}`, noop).replay, null, 'an id of an earlier run');
      assert.equal(hub.subscribe('doc', DOC, `${hub.boot}-99`, noop).replay, null, 'an id the hub never gave');
      assert.equal(hub.subscribe('doc', DOC, 'garbage', noop).replay, null);
      assert.deepEqual(hub.subscribe('doc', DOC, undefined, noop).replay, [], 'no id: from now on');
    } finally {
      hub.close();
    }
  });

  test('a document first seen after other events resumes from the cursor handed out with it', () => {
    const hub = new LiveHub();
    try {
      hub.publish('doc', OTHER, 'edited', 1);
      const cursor = hub.cursor('doc', DOC);
      hub.publish('doc', DOC, 'edited', 2);
      assert.deepEqual(hub.subscribe('doc', DOC, cursor, () => {}).replay!.map((e) => e.seq), [2]);
    } finally {
      hub.close();
    }
  });

  test('the byte bound drops the oldest frames too', () => {
    const hub = new LiveHub({ replayBytes: 2_000 });
    try {
      const big = 'x'.repeat(900);
      const e1 = hub.publish('doc', DOC, 'edited', big);
      const e2 = hub.publish('doc', DOC, 'edited', big);
      hub.publish('doc', DOC, 'edited', big);
      hub.publish('doc', DOC, 'edited', big);
      // Two frames of ~1 KB fit: 3 and 4 are kept, so one can resume after 2 but not after 1.
      assert.equal(hub.subscribe('doc', DOC, e1.id, () => {}).replay, null);
      assert.deepEqual(hub.subscribe('doc', DOC, e2.id, () => {}).replay!.map((e) => e.seq), [3, 4]);
    } finally {
      hub.close();
    }
  });

  test('presence: one entry per user however many tabs, leaving, expiry within the TTL, readers told', () => {
    let now = Date.parse('2026-03-01T10:00:00Z');
    const hub = new LiveHub({ presenceTtlMs: 25_000, now: () => now });
    try {
      const { got, reader } = collect();
      hub.subscribe('doc', DOC, undefined, reader);
      hub.beat('doc', DOC, ALICE, 'tab1');
      now += 1000;
      hub.beat('doc', DOC, BOB, 'tab1');
      let list = hub.beat('doc', DOC, ALICE, 'tab2');
      assert.deepEqual(
        list.map((e) => [e.name, e.clients]),
        [['alice', 2], ['bob', 1]],
      );
      assert.equal(list[0]!.since, '2026-03-01T10:00:00.000Z');
      assert.equal(eventNames(got).filter((n) => n === 'presence').length, 3, 'each change is told');
      hub.beat('doc', DOC, BOB, 'tab1');
      assert.equal(eventNames(got).filter((n) => n === 'presence').length, 3, 'a beat that changes nothing is not');
      list = hub.beat('doc', DOC, ALICE, 'tab1', true);
      assert.deepEqual(list.map((e) => [e.name, e.clients]), [['alice', 1], ['bob', 1]]);

      // Bob beats again 20 s later; Alice's last beat was 21 s ago: at 25 s she is gone, he stays.
      now += 20_000;
      hub.beat('doc', DOC, BOB, 'tab1');
      now += 4_500;
      assert.deepEqual(hub.presence('doc', DOC).map((e) => e.name), ['alice', 'bob']);
      now += 600;
      assert.deepEqual(hub.presence('doc', DOC).map((e) => e.name), ['bob'], 'a listing never shows an expired beat');
      const before = eventNames(got).length;
      hub.sweepNow();
      const last = frames(got).at(-1)!;
      assert.equal(eventNames(got).length, before + 1);
      assert.match(last, /^event: presence\ndata: /, 'presence frames carry no id: they are not replayed');
      assert.deepEqual(JSON.parse(last.split('data: ')[1]!).data.map((e: any) => e.name), ['bob']);
    } finally {
      hub.close();
    }
  });

  test('end() sends the last event and ends every reader; the channel starts afresh', () => {
    const hub = new LiveHub();
    try {
      const { got, reader } = collect();
      const cursor = hub.cursor('doc', DOC);
      hub.subscribe('doc', DOC, undefined, reader);
      hub.end('doc', DOC, 'deleted', { id: DOC });
      assert.deepEqual(eventNames(got), ['deleted']);
      assert.deepEqual(got.at(-1), { end: 'gone' });
      assert.equal(hub.readers('doc', DOC), 0);
      assert.equal(hub.subscribe('doc', DOC, cursor, () => {}).replay, null, 'events of the deleted document are not replayed');
    } finally {
      hub.close();
    }
  });
});

describe('liveRoutes over HTTP', () => {
  let app: App;
  let hub: LiveHub;
  let base: string;
  const path = (id = DOC) => `/api/v1/things/${id}`;

  before(async () => {
    hub = new LiveHub({ keepAliveMs: 200 });
    app = createHttpApp({ logger: false });
    // Stands in for auth/access.ts: every caller is alice (the live module reads only req.principal).
    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (req) => {
      req.principal = { kind: 'user', user: { id: 'u1', username: req.headers['x-user'] ?? 'alice' } } as never;
    });
    liveRoutes(app, hub, {
      kind: 'thing',
      path: '/api/v1/things/:id',
      authorize: (_req, id) => {
        if (id === OTHER) throw notFound(`Thing ${id} not found.`);
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  after(async () => {
    hub.close();
    await app.close();
  });

  test('a reader gets ready, then each change with its id; reconnecting with Last-Event-ID resumes without a gap', async () => {
    const c = new Client(base);
    const r1 = await LiveReader.open(c, `${path()}/events`);
    assert.equal(r1.status, 200);
    assert.match(r1.headers!.get('content-type')!, /^text\/event-stream/);
    const ready = await r1.next('ready');
    assert.deepEqual(ready.body.data, { presence: [] });
    assert.ok(ready.id, 'the first ready carries the cursor');
    hub.publish('thing', DOC, 'edited', { v: 1 }, 'tab-A');
    const e1 = await r1.next('edited');
    assert.deepEqual(e1.body.data, { v: 1 });
    assert.equal(e1.body.origin, 'tab-A');
    r1.close();

    // While nobody reads, two more changes; the reader comes back with the last id it saw.
    await waitFor(() => hub.readers('thing', DOC) === 0);
    hub.publish('thing', DOC, 'edited', { v: 2 });
    hub.publish('thing', DOC, 'moved', { v: 3 });
    const r2 = await LiveReader.open(c, `${path()}/events`, { lastEventId: e1.id });
    await r2.next('ready');
    assert.deepEqual((await r2.next('edited')).body.data, { v: 2 });
    assert.deepEqual((await r2.next('moved')).body.data, { v: 3 });
    hub.publish('thing', DOC, 'edited', { v: 4 });
    assert.deepEqual((await r2.next('edited')).body.data, { v: 4 });
    assert.deepEqual(
      r2.frames.filter((f) => f.id).map((f) => f.body.data.v),
      [2, 3, 4],
      'nothing twice, nothing missing',
    );
    // The query-string form (EventSource cannot set headers on its first request).
    const r3 = await LiveReader.open(c, `${path()}/events`, { query: `?last_event_id=${encodeURIComponent(r2.lastId()!)}` });
    await r3.next('ready');
    hub.publish('thing', DOC, 'edited', { v: 5 });
    assert.deepEqual((await r3.next('edited')).body.data, { v: 5 });
    assert.equal(r3.frames.filter((f) => f.id && f.event === 'edited').length, 1);
    r2.close();
    r3.close();
  });

  test('an id the hub no longer holds gets resync with where to carry on', async () => {
    const c = new Client(base);
    const r = await LiveReader.open(c, `${path()}/events`, { lastEventId: 'feedbe-3' });
    const resync = await r.next();
    assert.equal(resync.event, 'resync');
    assert.deepEqual(resync.body.data, { reason: 'unknown-id' });
    assert.equal(resync.id, hub.cursor('thing', DOC));
    await r.next('ready');
    r.close();
  });

  test('presence is listed, beaten and streamed', async () => {
    const c = new Client(base);
    const r = await LiveReader.open(c, `${path()}/events`);
    const ready = await r.next('ready');
    const beat = await new Client(base, { 'x-user': 'bob' }).post(`${path()}/presence`, { client_id: 'tab-1' });
    assert.equal(beat.status, 200);
    assert.deepEqual(beat.body.data.map((e: any) => [e.name, e.kind, e.clients]), [['bob', 'user', 1]]);
    const pushed = await r.next('presence');
    assert.deepEqual(pushed.body.data.map((e: any) => e.name), ['bob']);
    assert.equal(pushed.id, ready.id, 'a presence frame carries no id of its own (the parser reports the last one seen)');
    const listed = await c.get(`${path()}/presence`);
    assert.deepEqual(listed.body, { success: true, data: beat.body.data });
    const left = await new Client(base, { 'x-user': 'bob' }).post(`${path()}/presence`, { client_id: 'tab-1', leaving: true });
    assert.deepEqual(left.body.data, []);
    assert.deepEqual((await r.next('presence')).body.data, []);
    const bad = await c.post(`${path()}/presence`, { client_id: 'no spaces allowed' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /"client_id"/);
    r.close();
  });

  test('a document the caller may not read answers in the envelope, before any stream', async () => {
    const c = new Client(base);
    const r = await LiveReader.open(c, `${path(OTHER)}/events`);
    assert.equal(r.status, 404);
    assert.deepEqual(JSON.parse(r.errorBody), { success: false, error: `Thing ${OTHER} not found.` });
    assert.equal((await c.get(`${path(OTHER)}/presence`)).status, 404);
    assert.equal((await c.get(`/api/v1/things/not-a-uuid/presence`)).status, 400);
  });

  test('the end of a document ends its streams; closing the hub ends the rest', async () => {
    const c = new Client(base);
    const doomed = '11111111-2222-4333-8444-555555555555';
    const r = await LiveReader.open(c, `${path(doomed)}/events`);
    const other = await LiveReader.open(c, `${path()}/events`);
    await r.next('ready');
    await other.next('ready');
    hub.end('thing', doomed, 'deleted', { id: doomed });
    assert.deepEqual((await r.next('deleted')).body.data, { id: doomed });
    assert.deepEqual((await r.next('end')).body.data, { reason: 'gone' });
    await r.waitEnd();
    assert.equal(other.ended, false);
    hub.close();
    await other.waitEnd();
    assert.equal(other.all('end').length, 0, 'a service that stops is no reason not to come back');
  });
});

const waitFor = (cond: () => boolean): Promise<unknown> => waitUntil('the condition', cond);
