// Dashboards over real HTTP against a real appliance (embedded engine, SQLite file): every endpoint
// of interface-spec "Dashboards", roles and API-key permissions, widgets on the grid (the service
// stores what the page's own grid module computes), execute one and all (bounded, one failure
// does not fail the rest, stored results shared by max_age_s), variables and refresh interval,
// YAML export/import round trips, bad input that stores nothing, the live stream read by a real
// SSE client in a second session, and shared links from disabled to deleted, read without
// cookies, with the engine's work counted under a burst of public reads.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { placeBox } from '../../renderer/src/lib/dashboards/grid.ts';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { createApiKey, createFractal, credentialClient, expectBadField, expectError, expectOk, grant, readMetadataTable, unknownId, UUID_RE } from '../support/api.ts';
import { PLACE_CASES } from '../support/grid-cases.ts';
import { LiveReader, waitForPresence } from '../support/live.ts';
import { ingest, sampleEvents } from '../support/query.ts';

let app: TestAppliance;
let admin: Client;
let ana: Client; // analyst on A
let ben: Client; // analyst on A (the second browser)
let vic: Client; // viewer on A
let oto: Client; // analyst on B only
let keyFull: Client; // A's key: query + dashboard
let keyNoDash: Client; // A's key: query only
let keyNoQuery: Client; // A's key: dashboard only
let fa: any;
let fb: any;

const DB = '/api/v1/dashboards';
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
const anonymous = () => new Client(app.url);

async function dashboard(c: Client, body: Record<string, unknown>, scope: any = fa): Promise<any> {
  return expectOk(await c.post(DB, { fractal_id: scope.id, ...body }), 201);
}
async function widget(c: Client, id: string, body: Record<string, unknown>): Promise<any> {
  return expectOk(await c.post(`${DB}/${id}/widgets`, body), 201);
}
const get = async (c: Client, id: string) => expectOk(await c.get(`${DB}/${id}`));
const cellsOf = (d: any) => Object.fromEntries(d.widgets.map((w: any) => [w.id, [w.pos_x, w.pos_y, w.width, w.height]]));
const setLinks = async (on: boolean) => expectOk(await admin.put('/api/v1/settings', { shared_links_enabled: on }));

before(async () => {
  app = await startTestAppliance();
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  fa = await createFractal(admin, 'ops-a');
  fb = await createFractal(admin, 'ops-b');
  await ingest(app, fa.default_ingest_token, fa.id, [
    ...sampleEvents(),
    { timestamp: daysAgo(3), host: 'old1', user: 'mallory', status: 500, msg: 'beacon' },
    { timestamp: daysAgo(3), host: 'old1', user: 'mallory', status: 500, msg: 'beacon again' },
  ]);
  await ingest(app, fb.default_ingest_token, fb.id, [{ timestamp: daysAgo(0.01), host: 'b-only', user: 'zed', status: 200, msg: 'tenant b' }]);
  [ana, ben, vic, oto] = await Promise.all(['ana', 'ben', 'vic', 'oto'].map((u) => makeUser(admin, u)));
  await grant(admin, fa.id, { username: 'ana' }, 'analyst');
  await grant(admin, fa.id, { username: 'ben' }, 'analyst');
  await grant(admin, fa.id, { username: 'vic' }, 'viewer');
  await grant(admin, fb.id, { username: 'oto' }, 'analyst');
  await grant(admin, fb.id, { username: 'ana' }, 'analyst');
  const A = `/api/v1/fractals/${fa.id}`;
  keyFull = credentialClient(app.url, (await createApiKey(admin, A, { name: 'wallboard', permissions: { query: true, dashboard: true } })).key);
  keyNoDash = credentialClient(app.url, (await createApiKey(admin, A, { name: 'reader', permissions: { query: true } })).key);
  keyNoQuery = credentialClient(app.url, (await createApiKey(admin, A, { name: 'layout-bot', permissions: { query: false, dashboard: true } })).key);
});
after(async () => {
  await app?.dispose();
});

describe('dashboards', () => {
  test('create, read, list with a text filter, update with versions, refresh interval, variables, delete', async () => {
    const d = await dashboard(ana, { name: 'Web front', description: 'What the web tier does', refresh_interval_s: 30, variables: [{ name: 'host', value: 'web1' }], time_range: '4h' });
    assert.match(d.id, UUID_RE);
    assert.equal(d.fractal_id, fa.id);
    assert.equal(d.prism_id, null);
    assert.equal(d.refresh_interval_s, 30);
    assert.deepEqual(d.variables, [{ name: 'host', value: 'web1' }]);
    assert.equal(d.time_range, '4h');
    assert.equal(d.shared_hide_queries, true, 'queries are hidden from shared links unless the dashboard says otherwise');
    assert.equal(d.version, 1);
    assert.equal(d.created_by, 'ana');
    assert.equal(d.can_edit, true);
    assert.deepEqual(d.scope, { type: 'fractal', id: fa.id, name: 'ops-a' });
    assert.deepEqual(d.widgets, []);
    assert.match(d.live_event_id, /^[0-9a-f]+-\d+$/);

    await dashboard(ana, { name: 'Database' });
    const list = await vic.get(`${DB}?fractal_id=${fa.id}`);
    assert.ok(Number(list.headers.get('x-total-count')) >= 2);
    assert.deepEqual(expectOk(await vic.get(`${DB}?fractal_id=${fa.id}&q=WEB TIER`)).map((x: any) => [x.name, x.widget_count]), [['Web front', 0]]);

    const changed = expectOk(await ben.put(`${DB}/${d.id}`, { name: 'Web front (prod)', time_range: 'custom', start: daysAgo(2), end: daysAgo(1), version: 1 }));
    assert.equal(changed.version, 2);
    assert.equal(changed.updated_by, 'ben');
    expectError(await ana.put(`${DB}/${d.id}`, { name: 'Stale rename', version: 1 }), 409, 'changed by ben', 'version 2');
    expectError(await ana.put(`${DB}/${d.id}`, { name: 'DATABASE' }), 409, 'already exists');
    assert.equal((await get(ana, d.id)).name, 'Web front (prod)');

    assert.deepEqual(expectOk(await ana.put(`${DB}/${d.id}/refresh-interval`, { refresh_interval_s: 5 })), { refresh_interval_s: 5, version: 3 });
    assert.deepEqual(expectOk(await ana.put(`${DB}/${d.id}/refresh-interval`, { refresh_interval_s: 0 })).refresh_interval_s, 0, '0 switches it off');
    const vars = expectOk(await ana.put(`${DB}/${d.id}/variables`, { variables: [{ name: 'host', value: 'web2' }, { name: 'min', value: '400' }] }));
    assert.deepEqual(vars.variables, [{ name: 'host', value: 'web2' }, { name: 'min', value: '400' }]);
    expectError(await ana.put(`${DB}/${d.id}/variables`, { variables: [], version: 1 }), 409, 'reload it');

    expectOk(await ana.del(`${DB}/${d.id}`));
    expectError(await ana.get(`${DB}/${d.id}`), 404, `Dashboard ${d.id} not found.`);
  });

  test('roles: viewers read and run, analysts write, another tenant sees nothing; API keys need "dashboard" (and "query" to run)', async () => {
    const d = await dashboard(ana, { name: 'Access check' });
    const w = await widget(ana, d.id, { title: 'Count', query_content: 'count()' });
    const seen = await get(vic, d.id);
    assert.equal(seen.can_edit, false);
    assert.equal(seen.widgets.length, 1);
    expectOk(await vic.post(`${DB}/${d.id}/execute`, {}), 200);
    expectError(await vic.post(`${DB}/${d.id}/widgets`, { query_content: 'count()' }), 403, 'analyst role', 'you have viewer');
    expectError(await vic.put(`${DB}/${d.id}/widgets/${w.id}/layout`, { pos_x: 0, pos_y: 4, width: 6, height: 4 }), 403, 'analyst role');
    expectError(await vic.put(`${DB}/${d.id}`, { name: 'x' }), 403, 'analyst role');
    expectError(await vic.post(DB, { name: 'viewer dash', fractal_id: fa.id }), 403, 'Writing dashboards needs the analyst role');
    expectError(await vic.get(`${DB}/${d.id}/shared-links`), 403, 'analyst role');
    expectError(await oto.get(`${DB}/${d.id}`), 404, `Dashboard ${d.id} not found.`);
    expectError(await oto.post(`${DB}/${d.id}/execute`, {}), 404);
    expectError(await oto.get(`${DB}/${d.id}/events`), 404);
    expectError(await oto.get(`${DB}/${d.id}/export`), 404);
    expectError(await oto.get(`${DB}?fractal_id=${fa.id}`), 404, `Fractal ${fa.id} not found.`);
    expectError(await anonymous().get(`${DB}/${d.id}`), 401);

    expectError(await keyNoDash.get(`${DB}/${d.id}`), 403, 'lacks the "dashboard" permission');
    assert.equal((await get(keyFull, d.id)).name, 'Access check');
    const byKey = await widget(keyFull, d.id, { title: 'From a script', query_content: 'count()' });
    assert.equal(byKey.created_by, 'wallboard (API key)');
    expectOk(await keyNoQuery.put(`${DB}/${d.id}/widgets/${byKey.id}/layout`, { pos_x: 0, pos_y: 10, width: 3, height: 2 }));
    expectError(await keyNoQuery.post(`${DB}/${d.id}/execute`, {}), 403, 'lacks the "query" permission');
    expectOk(await keyFull.post(`${DB}/${d.id}/widgets/${w.id}/execute`, {}));
  });

  test('a dashboard on a prism runs its widgets over every member fractal', async () => {
    const prism = expectOk(await admin.post('/api/v1/prisms', { name: 'both', fractal_ids: [fa.id, fb.id] }), 201);
    await grant(admin, prism.id, { username: 'ana' }, 'analyst', 'prism');
    const d = expectOk(await ana.post(DB, { name: 'Across', prism_id: prism.id }), 201);
    assert.deepEqual(d.scope, { type: 'prism', id: prism.id, name: 'both' });
    const w = await widget(ana, d.id, { query_content: 'groupBy(host) | sort(host)' });
    const r = expectOk(await ana.post(`${DB}/${d.id}/widgets/${w.id}/execute`, {}));
    assert.ok(r.results.some((x: any) => x.host === 'b-only') && r.results.some((x: any) => x.host === 'web1'));
    expectError(await vic.get(`${DB}/${d.id}`), 404, 'not found');
  });
});

describe('widgets on the grid', () => {
  test('add with cells or at the first free ones, update with versions, delete; what each shows and how', async () => {
    const d = await dashboard(ana, { name: 'Grid' });
    const a = await widget(ana, d.id, { title: 'Errors by host', query_content: 'status>=500 | groupBy(host)', chart_type: 'barchart', pos_x: 0, pos_y: 0, width: 8, height: 4 });
    assert.deepEqual([a.pos_x, a.pos_y, a.width, a.height], [0, 0, 8, 4]);
    assert.equal(a.chart_type, 'barchart');
    assert.equal(a.time_range, null, 'the dashboard’s range');
    assert.equal(a.result, null, 'not run yet');
    assert.deepEqual(a.moved, []);
    const b = await widget(ana, d.id, { query_content: 'count()' });
    assert.deepEqual([b.pos_x, b.pos_y, b.width, b.height], [0, 4, 6, 4], 'the first free 6×4 cells');
    assert.equal(b.chart_type, 'auto');
    const c = await widget(ana, d.id, { query_content: 'groupBy(user)', chart_type: 'piechart', time_range: '7d', pos_x: 8, pos_y: 0, width: 4, height: 4 });
    assert.equal(c.time_range, '7d');

    const edited = expectOk(await ben.put(`${DB}/${d.id}/widgets/${a.id}`, { title: 'Server errors by host', version: 1 }));
    assert.equal(edited.version, 2);
    expectError(await ana.put(`${DB}/${d.id}/widgets/${a.id}`, { title: 'stale', version: 1 }), 409, 'changed by ben', 'version 2');
    expectOk(await ana.put(`${DB}/${d.id}/widgets/${c.id}`, { time_range: null }));
    assert.equal((await get(ana, d.id)).widgets.find((w: any) => w.id === c.id).time_range, null);

    const other = await dashboard(ana, { name: 'Grid elsewhere' });
    const foreign = await widget(ana, other.id, { query_content: 'count()' });
    expectError(await ana.put(`${DB}/${d.id}/widgets/${foreign.id}`, { title: 'hijack' }), 400, 'belongs to another dashboard');
    expectError(await ana.put(`${DB}/${d.id}/widgets/${foreign.id}/layout`, { pos_x: 0, pos_y: 0, width: 1, height: 1 }), 400, 'belongs to another dashboard');
    expectError(await ana.del(`${DB}/${d.id}/widgets/${unknownId()}`), 404, 'not found in dashboard "Grid"');
    expectOk(await ana.del(`${DB}/${d.id}/widgets/${b.id}`));
    const after = await get(ana, d.id);
    assert.deepEqual(after.widgets.map((w: any) => w.id), [a.id, c.id]);
    assert.equal(after.version, 5, 'three widgets added, one deleted');
  });

  for (const gc of PLACE_CASES) {
    test(`the service places widgets as the page’s grid module does: ${gc.name}`, async () => {
      const d = await dashboard(ana, { name: `Layout: ${gc.name}` });
      // The case's boxes as widgets (placed top first so none pushes another while being set up).
      const ids = new Map<string, string>();
      for (const b of [...gc.layout].sort((x, y) => x.pos_y - y.pos_y)) {
        const w = await widget(ana, d.id, { title: b.id, query_content: 'count()', pos_x: b.pos_x, pos_y: b.pos_y, width: b.width, height: b.height });
        ids.set(b.id, w.id);
      }
      const before = await get(ana, d.id);
      const layout = before.widgets.map((w: any) => ({ id: w.id, pos_x: w.pos_x, pos_y: w.pos_y, width: w.width, height: w.height }));
      const cells = { pos_x: gc.placed.pos_x, pos_y: gc.placed.pos_y, width: gc.placed.width, height: gc.placed.height };
      let placedId: string;
      if (ids.has(gc.placed.id)) {
        placedId = ids.get(gc.placed.id)!;
        const r = expectOk(await ana.put(`${DB}/${d.id}/widgets/${placedId}/layout`, cells));
        assert.deepEqual([r.pos_x, r.pos_y, r.width, r.height], [cells.pos_x, cells.pos_y, cells.width, cells.height]);
      } else {
        placedId = (await widget(ana, d.id, { title: gc.placed.id, query_content: 'count()', ...cells })).id;
      }
      const page = placeBox(layout, { id: placedId, ...cells });
      const stored = cellsOf(await get(ana, d.id));
      assert.deepEqual(stored, Object.fromEntries(page.map((b) => [b.id, [b.pos_x, b.pos_y, b.width, b.height]])), 'the page’s grid module and the service agree');
      const byName = Object.fromEntries([...ids].map(([name, id]) => [name, stored[id]]));
      if (!ids.has(gc.placed.id)) byName[gc.placed.id] = stored[placedId];
      assert.deepEqual(byName, Object.fromEntries(Object.entries(gc.expect).map(([k, c]) => [k, [c.pos_x, c.pos_y, c.width, c.height]])));
    });
  }

  test('bad input: a query that does not compile, an unknown chart type, cells off the grid, a refresh under 5 s; nothing stored', async () => {
    const d = await dashboard(ana, { name: 'Bad input', variables: [{ name: 'who', value: 'alice' }] });
    const w = await widget(ana, d.id, { query_content: 'user=@who | count()', pos_x: 0, pos_y: 0, width: 6, height: 4 });
    const before = await get(ana, d.id);

    const parse = await ana.post(`${DB}/${d.id}/widgets`, { query_content: 'status>=500 | groupBy(host' });
    expectError(parse, 400, 'Parse error');
    assert.equal(parse.body.error_type, 'parse');
    assert.deepEqual(Object.keys(parse.body.error_pos).sort(), ['end', 'start']);
    const unknownCmd = await ana.put(`${DB}/${d.id}/widgets/${w.id}`, { query_content: 'count() | frobnicate()' });
    expectError(unknownCmd, 400, 'unsupported command: frobnicate');
    assert.equal(unknownCmd.body.error_type, 'translate');
    const badVariable = await ana.put(`${DB}/${d.id}/widgets/${w.id}`, { query_content: 'user=@nobody | count()' });
    expectError(badVariable, 400, 'Parse error');
    assert.deepEqual(badVariable.body.error_pos, { start: 5, end: 6 }, 'an unknown @variable stays in the text and is where it fails');
    expectError(await ana.post(`${DB}/${d.id}/widgets`, { query_content: 'url=/[/ | count()' }), 400, 'invalid regular expression');
    expectError(await ana.post(`${DB}/${d.id}/widgets`, { query_content: '   ' }), 400, '"query_content" must hold a query');
    expectBadField(await ana.post(`${DB}/${d.id}/widgets`, { title: 'no query' }), 'query_content');
    expectError(await ana.post(`${DB}/${d.id}/widgets`, { query_content: 'count()', chart_type: 'sparkline' }), 400, 'unknown chart type "sparkline"', 'timechart');
    expectError(await ana.put(`${DB}/${d.id}/widgets/${w.id}`, { chart_type: 'donut' }), 400, '"chart_type"');
    expectError(await ana.post(`${DB}/${d.id}/widgets`, { query_content: 'count()', pos_x: 10, pos_y: 0, width: 4, height: 2 }), 400, "right edge");
    expectError(await ana.post(`${DB}/${d.id}/widgets`, { query_content: 'count()', pos_x: 0, pos_y: 0, width: 13, height: 2 }), 400, '"width" must be from 1 to 12');
    expectError(await ana.post(`${DB}/${d.id}/widgets`, { query_content: 'count()', pos_x: 0 }), 400, 'needs both "pos_x" and "pos_y"');
    expectError(await ana.put(`${DB}/${d.id}/widgets/${w.id}/layout`, { pos_x: -1, pos_y: 0, width: 2, height: 2 }), 400, '"pos_x" must be from 0 to 11');
    expectError(await ana.put(`${DB}/${d.id}/widgets/${w.id}/layout`, { pos_x: 0, pos_y: 0, width: 2, height: 0 }), 400, '"height"');
    expectError(await ana.put(`${DB}/${d.id}/widgets/${w.id}/layout`, { pos_x: 0, pos_y: 0, width: '6', height: 2 }), 400, '"width" must be a whole number');
    expectError(await ana.put(`${DB}/${d.id}/widgets/${w.id}/layout`, { pos_x: 0, pos_y: 0 }), 400, '"width" is required');
    expectError(await ana.put(`${DB}/${d.id}/refresh-interval`, { refresh_interval_s: 3 }), 400, '"refresh_interval_s"', 'from 5');
    expectError(await ana.put(`${DB}/${d.id}/refresh-interval`, { refresh_interval_s: 'often' }), 400, '"refresh_interval_s"');
    expectError(await ana.put(`${DB}`.concat(`/${d.id}`), { refresh_interval_s: 4 }), 400, '"refresh_interval_s"');
    expectError(await ana.post(DB, { name: 'x', fractal_id: fa.id, refresh_interval_s: 1 }), 400, '"refresh_interval_s"');
    expectError(await ana.post(DB, { name: 'x', fractal_id: fa.id, time_range: 'forever' }), 400, '"time_range"');
    expectError(await ana.put(`${DB}/${d.id}/variables`, { variables: [{ name: '1host', value: 'x' }] }), 400, 'is not a name');
    expectError(await ana.put(`${DB}/${d.id}`, { time_range: null }), 400, 'cannot be null');
    expectBadField(await ana.post(DB, { fractal_id: fa.id }), 'name');

    const after = await get(ana, d.id);
    assert.deepEqual({ ...after, live_event_id: null }, { ...before, live_event_id: null }, 'nothing changed by any of it');
  });
});

describe('running widgets', () => {
  test('execute all: each widget over its own range or the dashboard’s, one failure reported while the others return, results stored and shared', async () => {
    const d = await dashboard(ana, { name: 'Run all', time_range: '24h', variables: [{ name: 'who', value: 'alice' }] });
    const count = await widget(ana, d.id, { title: 'All', query_content: 'count()' });
    const week = await widget(ana, d.id, { title: 'Week', query_content: 'user=mallory | count()', time_range: '7d' });
    const day = await widget(ana, d.id, { title: 'Day', query_content: 'user=mallory | count()' });
    const who = await widget(ana, d.id, { title: 'Who', query_content: 'user=@who | groupBy(host) | sort(host)', chart_type: 'barchart' });
    const bad = await widget(ana, d.id, { title: 'Who, counted', query_content: 'user=@who | count()' });
    const runs = app.context.dashboardRuns;
    const before = runs.queriesRun;
    const all = expectOk(await ana.post(`${DB}/${d.id}/execute`, {}));
    const byId = Object.fromEntries(all.results.map((r: any) => [r.widget_id, r]));
    assert.equal(all.results.length, 5);
    assert.equal(runs.queriesRun - before, 5);
    assert.ok(runs.peakActive <= runs.concurrency, `at most ${runs.concurrency} at once, saw ${runs.peakActive}`);
    assert.equal(Number(byId[count.id].results[0]._count), 8, 'the dashboard’s 24 hours');
    assert.equal(Number(byId[week.id].results[0]._count), 2, 'the widget’s own 7 days');
    assert.equal(Number(byId[day.id].results[0]._count), 0);
    assert.deepEqual(byId[who.id].results.map((r: any) => [r.host, Number(r._count)]), [['web1', 2], ['web2', 1]]);
    assert.equal(byId[who.id].chart_type, 'barchart', 'drawn as the widget says');
    assert.equal(byId[who.id].query_chart_type, '', 'the query itself asks for no chart');
    assert.equal(byId[count.id].chart_type, '', 'auto: what the query asks for, here a table');
    for (const r of all.results) assert.equal(r.cached, false);

    // A widget that fails at run time (its variable now breaks it) reports its error; the rest still return.
    expectOk(await ana.put(`${DB}/${d.id}/variables`, { variables: [{ name: 'who', value: '(' }] }));
    const again = expectOk(await ana.post(`${DB}/${d.id}/execute`, {}));
    const failed = again.results.filter((r: any) => !r.success);
    assert.deepEqual(failed.map((r: any) => r.widget_id).sort(), [who.id, bad.id].sort());
    for (const f of failed) {
      assert.equal(f.error_type, 'parse');
      assert.match(f.error, /^Parse error/);
      assert.ok(f.error_pos);
    }
    assert.equal(again.results.filter((r: any) => r.success).length, 3);
    const stored = await get(vic, d.id);
    assert.equal(stored.widgets.find((w: any) => w.id === who.id).result.success, false, 'the failure is what the widget now shows');
    assert.equal(Number(stored.widgets.find((w: any) => w.id === count.id).result.results[0]._count), 8);
    assert.equal(stored.widgets.find((w: any) => w.id === count.id).result.stale, false);
  });

  test('max_age_s answers stored results without a query; other variables or another range are answered only, never stored', async () => {
    const d = await dashboard(ana, { name: 'Shared runs', variables: [{ name: 'h', value: 'web1' }] });
    const w = await widget(ana, d.id, { query_content: 'host=@h | count()' });
    const runs = app.context.dashboardRuns;
    const first = expectOk(await ana.post(`${DB}/${d.id}/execute`, {}));
    assert.equal(Number(first.results[0].results[0]._count), 4);
    const n = runs.queriesRun;
    const cached = expectOk(await ben.post(`${DB}/${d.id}/execute`, { max_age_s: 600 }));
    assert.equal(cached.results[0].cached, true);
    assert.equal(cached.results[0].executed_at, first.results[0].executed_at);
    assert.equal(runs.queriesRun, n, 'no query for results younger than max_age_s');

    const other = expectOk(await ben.post(`${DB}/${d.id}/widgets/${w.id}/execute`, { variables: [{ name: 'h', value: 'db1' }] }));
    assert.equal(Number(other.results[0]._count), 2);
    const ranged = expectOk(await ben.post(`${DB}/${d.id}/execute`, { start: daysAgo(4), end: daysAgo(2) }));
    assert.equal(Number(ranged.results[0].results[0]._count), 0);
    const still = (await get(ana, d.id)).widgets[0].result;
    assert.equal(Number(still.results[0]._count), 4, 'the stored results are the dashboard’s own settings’');
    assert.equal(still.executed_at, first.results[0].executed_at);

    // Changing the query makes the stored results stale until it runs again.
    expectOk(await ana.put(`${DB}/${d.id}/widgets/${w.id}`, { query_content: 'host=@h | groupBy(user)' }));
    assert.equal((await get(ana, d.id)).widgets[0].result.stale, true);
    const fresh = expectOk(await ana.post(`${DB}/${d.id}/execute`, { max_age_s: 600 }));
    assert.equal(fresh.results[0].cached, false, 'stale results are not answered as current');
  });

  test('execute one: its result, or its failure as the answer’s status with error_pos', async () => {
    const d = await dashboard(ana, { name: 'Run one', variables: [{ name: 'p', value: 'ok' }] });
    const w = await widget(ana, d.id, { query_content: 'groupBy(host) | sort(_count, order=desc) | head(1)', chart_type: 'singleval' });
    const r = expectOk(await vic.post(`${DB}/${d.id}/widgets/${w.id}/execute`, {}));
    assert.equal(r.widget_id, w.id);
    assert.equal(r.results[0].host, 'web1');
    assert.deepEqual(r.field_order, ['host', '_count']);
    assert.equal(r.is_aggregated, true);
    assert.equal(r.chart_type, 'singleval');
    assert.ok(r.execution_ms >= 0);
    const failing = await widget(ana, d.id, { query_content: 'msg=@p | count()' });
    const res = await vic.post(`${DB}/${d.id}/widgets/${failing.id}/execute`, { variables: [{ name: 'p', value: '(' }] });
    expectError(res, 400, 'Parse error');
    assert.equal(res.body.error_type, 'parse');
    assert.deepEqual(res.body.error_pos, { start: 4, end: 5 });
    expectError(await vic.post(`${DB}/${d.id}/widgets/${failing.id}/execute`, { variables: [{ name: 'p', value: '/[/' }] }), 400, 'invalid regular expression');
    expectError(await vic.post(`${DB}/${d.id}/widgets/${unknownId()}/execute`, {}), 404);
    expectBadField(await vic.post(`${DB}/${d.id}/execute`, { max_age_s: -1 }), 'max_age_s');
    expectError(await vic.post(`${DB}/${d.id}/execute`, { widget_ids: [unknownId()] }), 400, '"widget_ids"');
  });
});

describe('YAML export and import', () => {
  test('a round trip gives an equal dashboard, into another fractal too', async () => {
    const d = await dashboard(ana, {
      name: 'Round trip',
      description: 'Everything a dashboard holds:\nvariables, a custom range, charts.',
      refresh_interval_s: 60,
      shared_hide_queries: false,
      variables: [{ name: 'host', value: 'web1' }, { name: 'quoted', value: 'a "b" c: d' }],
      time_range: 'custom',
      start: daysAgo(2),
      end: daysAgo(1),
    });
    await widget(ana, d.id, { title: 'Errors: by host', query_content: 'status>=500\n| groupBy(host)\n| sort(_count, order=desc)', chart_type: 'barchart', chart_config: { limit: 5 }, pos_x: 0, pos_y: 0, width: 8, height: 5 });
    await widget(ana, d.id, { title: '', query_content: 'host=@host | timechart(span=1h)', time_range: '7d', pos_x: 8, pos_y: 0, width: 4, height: 5 });
    await widget(ana, d.id, { title: 'Custom', query_content: "msg=\"it's # not a comment\" | count()", chart_type: 'singleval', time_range: 'custom', start: daysAgo(3), end: daysAgo(2), pos_x: 0, pos_y: 5, width: 12, height: 3 });
    const exported = await ana.get(`${DB}/${d.id}/export`);
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-type')!, /^application\/yaml/);
    assert.match(exported.headers.get('content-disposition')!, /attachment; filename="dashboard-Round-trip\.yaml"/);
    const yaml = exported.body as string;
    assert.match(yaml, /^kind: dashboard\nformat: 1\n/);
    assert.ok(!yaml.includes(d.id) && !yaml.includes(fa.id) && !yaml.includes('ana'), 'nothing of this appliance');

    const same = expectOk(await ana.req('POST', `${DB}/import?fractal_id=${fa.id}`, yaml, { 'content-type': 'application/yaml' }), 201);
    assert.equal(same.name, 'Round trip (2)', 'a taken name gets a number');
    const there = expectOk(await ana.req('POST', `${DB}/import?fractal_id=${fb.id}`, yaml, { 'content-type': 'application/yaml' }), 201);
    assert.equal(there.name, 'Round trip');
    assert.equal(there.fractal_id, fb.id);
    const again = (await ana.get(`${DB}/${there.id}/export`)).body as string;
    assert.equal(again, yaml, 'exporting the import gives the same YAML');
    const strip = (x: any) => ({
      ...Object.fromEntries(Object.entries(x).filter(([k]) => !['id', 'fractal_id', 'scope', 'live_event_id', 'created_at', 'updated_at', 'widgets', 'version'].includes(k))),
      widgets: x.widgets.map((w: any) => Object.fromEntries(Object.entries(w).filter(([k]) => !['id', 'dashboard_id', 'created_at', 'updated_at', 'version', 'result'].includes(k)))),
    });
    assert.deepEqual(strip(there), strip(await get(ana, d.id)), 'an equal dashboard');
    // JSON carrying the YAML works as well (and names its scope in the body).
    const viaJson = expectOk(await ana.post(`${DB}/import`, { yaml, fractal_id: fb.id }), 201);
    assert.equal(viaJson.name, 'Round trip (2)');
  });

  test('YAML that is not a dashboard is refused with its line; nothing is stored', async () => {
    const count = () => readMetadataTable(app, 'dashboards').length;
    const n = count();
    const post = (text: string) => ana.req('POST', `${DB}/import?fractal_id=${fa.id}`, text, { 'content-type': 'application/yaml' });
    expectError(await post('kind: dashboard\nformat: 1\nname: [unclosed\n'), 400, 'The YAML is not valid at line');
    expectError(await post('- just\n- a list\n'), 400, 'Line 1:', 'not a dashboard export');
    expectError(await post('kind: notebook\nformat: 1\nname: x\n'), 400, 'Line 1:', '"kind" is "notebook"');
    expectError(await post('kind: dashboard\nformat: 7\nname: x\n'), 400, 'Line 2:', 'format 7');
    const widgets = (w: string) => `kind: dashboard\nformat: 1\nname: Bad\nwidgets:\n  - title: fine\n    query_content: count()\n${w}`;
    expectError(await post(widgets('  - title: two\n    query_content: count()\n    chart_type: sparkline\n')), 400, 'Line 9:', 'unknown chart type "sparkline"');
    const notCompiling = await post(widgets('  - title: two\n    query_content: groupBy(host\n'));
    expectError(notCompiling, 400, 'Line 8:', 'widgets[1]', 'Parse error');
    assert.equal(notCompiling.body.error_type, 'parse');
    assert.ok(notCompiling.body.error_pos);
    expectError(await post(widgets('  - title: two\n    query_content: count() | frobnicate()\n')), 400, 'Line 8:', 'unsupported command: frobnicate');
    expectError(await post(widgets('  - title: two\n    query_content: count()\n    pos_x: 11\n    pos_y: 0\n    width: 4\n    height: 2\n')), 400, 'Line 9:', 'right edge');
    expectError(await post('kind: dashboard\nformat: 1\nname: x\nrefresh_interval_s: 2\n'), 400, 'Line 4:', '"refresh_interval_s"');
    expectError(await post('kind: dashboard\nformat: 1\nname: x\nvariables:\n  - name: ok\n    value: "1"\n  - name: "bad name"\n    value: "2"\n'), 400, 'Line 7:', 'is not a name');
    expectError(await post('kind: dashboard\nformat: 1\nwidgets: []\n'), 400, '"name"');
    expectError(await post('kind: dashboard\nformat: 1\nname: x\nwidgets: {}\n'), 400, 'Line 4:', '"widgets" must be a list');
    expectError(await ana.post(`${DB}/import`, { nothing: true }), 400, 'Send the dashboard as YAML');
    expectError(await vic.req('POST', `${DB}/import?fractal_id=${fa.id}`, 'kind: dashboard\nformat: 1\nname: v\n', { 'content-type': 'application/yaml' }), 403);
    assert.equal(count(), n, 'nothing stored');
    // Overlapping cells in a hand-written file are settled as the page would.
    const overlapping = expectOk(
      await post('kind: dashboard\nformat: 1\nname: Overlap\nwidgets:\n  - {query_content: count(), pos_x: 0, pos_y: 0, width: 6, height: 4}\n  - {query_content: count(), pos_x: 2, pos_y: 1, width: 6, height: 4}\n  - {query_content: count()}\n'),
      201,
    );
    assert.deepEqual(overlapping.widgets.map((w: any) => [w.pos_x, w.pos_y, w.width, w.height]), [[0, 0, 6, 4], [6, 0, 6, 4], [2, 4, 6, 4]]);
  });
});

describe('live editing', () => {
  test('a second session reads every change as it happens, resumes with Last-Event-ID, and sees the end', async () => {
    const d = await dashboard(ana, { name: 'Live' });
    const opened = await get(ben, d.id);
    const stream = await LiveReader.open(ben, `${DB}/${d.id}/events`, { lastEventId: opened.live_event_id });
    assert.equal(stream.status, 200);
    await stream.next('ready');

    const a = expectOk(await ana.req('POST', `${DB}/${d.id}/widgets`, { query_content: 'count()', pos_x: 0, pos_y: 0, width: 6, height: 4 }, { 'x-live-client': 'ana-tab' }), 201);
    const added = await stream.next('widget_added');
    assert.equal(added.body.origin, 'ana-tab');
    assert.equal(added.body.data.widget.id, a.id);
    const b = await widget(ana, d.id, { query_content: 'groupBy(host)', pos_x: 6, pos_y: 0, width: 6, height: 4 });
    await stream.next('widget_added');

    expectOk(await ana.put(`${DB}/${d.id}/widgets/${a.id}/layout`, { pos_x: 6, pos_y: 0, width: 6, height: 2 }));
    const moved = await stream.next('layout_changed');
    assert.deepEqual(
      moved.body.data.moved.map((m: any) => [m.id, m.pos_x, m.pos_y, m.width, m.height]),
      [[a.id, 6, 0, 6, 2], [b.id, 6, 2, 6, 4]],
      'the moved widget and the one it pushed',
    );
    expectOk(await ana.put(`${DB}/${d.id}/widgets/${b.id}`, { title: 'Hosts', chart_type: 'piechart' }));
    assert.equal((await stream.next('widget_updated')).body.data.widget.chart_type, 'piechart');
    expectOk(await ana.post(`${DB}/${d.id}/widgets/${b.id}/execute`, {}));
    const results = await stream.next('widget_results');
    assert.equal(results.body.data.widget_id, b.id);
    assert.equal(results.body.data.result.chart_type, 'piechart');
    assert.ok(results.body.data.result.results.length > 0);
    expectOk(await ana.put(`${DB}/${d.id}/variables`, { variables: [{ name: 'h', value: 'web2' }] }));
    assert.deepEqual((await stream.next('variables_updated')).body.data.variables, [{ name: 'h', value: 'web2' }]);
    expectOk(await ana.put(`${DB}/${d.id}/refresh-interval`, { refresh_interval_s: 10 }));
    assert.equal((await stream.next('refresh_interval_updated')).body.data.refresh_interval_s, 10);

    // Ben's connection drops; two changes happen; he comes back with the last id he saw.
    const seen = stream.lastId()!;
    stream.close();
    expectOk(await ana.put(`${DB}`.concat(`/${d.id}`), { description: 'while Ben was away' }));
    expectOk(await ana.del(`${DB}/${d.id}/widgets/${a.id}`));
    const back = await LiveReader.open(ben, `${DB}/${d.id}/events`, { lastEventId: seen });
    await back.next('ready');
    assert.equal((await back.next('dashboard_updated')).body.data.description, 'while Ben was away');
    assert.equal((await back.next('widget_deleted')).body.data.id, a.id);
    const ids = [...stream.frames, ...back.frames].filter((f) => f.id && f.event !== 'ready').map((f) => Number(f.id!.split('-')[1]));
    assert.equal(new Set(ids).size, ids.length, 'no event twice');

    const viewer = await LiveReader.open(vic, `${DB}/${d.id}/events`);
    await viewer.next('ready');
    expectOk(await ana.del(`${DB}/${d.id}`));
    assert.equal((await back.next('dashboard_deleted')).body.data.id, d.id);
    await back.waitEnd();
    await viewer.waitEnd();
  });

  test('presence lists who has the dashboard open; a stream hears who comes and goes', async () => {
    const d = await dashboard(ana, { name: 'Presence' });
    const stream = await LiveReader.open(ana, `${DB}/${d.id}/events`);
    await stream.next('ready');
    expectOk(await ana.post(`${DB}/${d.id}/presence`, { client_id: 'tab1' }));
    expectOk(await ben.post(`${DB}/${d.id}/presence`, { client_id: 'tab1' }));
    expectOk(await vic.post(`${DB}/${d.id}/presence`, { client_id: 'tab9' }));
    assert.deepEqual(expectOk(await vic.get(`${DB}/${d.id}/presence`)).map((e: any) => e.name), ['ana', 'ben', 'vic']);
    await waitForPresence(stream, ['ana', 'ben', 'vic']);
    expectOk(await ben.post(`${DB}/${d.id}/presence`, { client_id: 'tab1', leaving: true }));
    await waitForPresence(stream, ['ana', 'vic']);
    expectError(await oto.post(`${DB}/${d.id}/presence`, {}), 404);
    stream.close();
  });
});

describe('shared links', () => {
  test('lifecycle: disabled → enabled → served without sign-in → deleted → 404 → disabled → 404', async () => {
    const d = await dashboard(ana, { name: 'Wallboard', refresh_interval_s: 30, variables: [{ name: 'who', value: 'alice' }] });
    const w1 = await widget(ana, d.id, { title: 'Alice by host', query_content: 'user=@who | groupBy(host) | sort(host)', chart_type: 'barchart', pos_x: 0, pos_y: 0, width: 6, height: 4 });
    await widget(ana, d.id, { title: 'Status', query_content: 'groupBy(status) | piechart()', pos_x: 6, pos_y: 0, width: 6, height: 4 });
    await widget(ana, d.id, { title: 'Alice’s events', query_content: 'user=@who | table(host, msg)', pos_x: 0, pos_y: 4, width: 12, height: 4 });

    await setLinks(false);
    expectError(await ana.post(`${DB}/${d.id}/shared-links`, { label: 'NOC screen' }), 403, 'switched off', 'shared_links_enabled');
    assert.deepEqual(expectOk(await ana.get(`${DB}/${d.id}/shared-links`)), []);

    await setLinks(true);
    const link = expectOk(await ana.post(`${DB}/${d.id}/shared-links`, { label: 'NOC screen' }), 201);
    assert.match(link.token, /^svc_share_[A-Za-z0-9_-]{43}$/, '256 random bits');
    assert.equal(Buffer.from(link.token.slice('svc_share_'.length), 'base64url').length, 32);
    assert.equal(link.url, `${app.url}/shared/${link.token}`);
    assert.equal(link.label, 'NOC screen');
    assert.equal(link.expires_at, null);
    const listed = expectOk(await ben.get(`${DB}/${d.id}/shared-links`));
    assert.deepEqual(listed.map((l: any) => [l.id, l.label, l.token_prefix]), [[link.id, 'NOC screen', link.token.slice(0, 14)]]);
    assert.ok(!JSON.stringify(listed).includes(link.token), 'the token is shown once, at creation');
    assert.equal(readMetadataTable(app, 'dashboard_shared_links').some((r) => JSON.stringify(r).includes(link.token)), false, 'only its hash is stored');

    const pub = await anonymous().get(`/api/v1/shared/${link.token}`);
    const view = expectOk(pub);
    assert.equal(pub.headers.get('cache-control'), 'private, no-cache', 'kept by the browser only, asked for again each time');
    const etag = pub.headers.get('etag')!;
    assert.match(etag, /^"[\w-]{27}"$/);
    const unchanged = await fetch(`${app.url}/api/v1/shared/${link.token}`, { headers: { 'if-none-match': etag } });
    assert.equal(unchanged.status, 304, 'a reader holding the current answer is not sent it again');
    assert.equal(await unchanged.text(), '');
    assert.equal(view.name, 'Wallboard');
    assert.equal(view.hide_queries, true);
    assert.deepEqual(view.widgets.map((w: any) => [w.title, w.chart_type, w.result.chart_type]), [
      ['Alice by host', 'barchart', 'barchart'],
      ['Status', 'piechart', 'piechart'],
      ['Alice’s events', '', ''],
    ]);
    assert.deepEqual(view.widgets[0].result.results.map((r: any) => [r.host, Number(r._count)]), [['web1', 2], ['web2', 1]]);
    const events = view.widgets[2].result;
    assert.deepEqual(events.results.map((r: any) => r.msg).sort(), ['Internal Error', 'bye Zoë', 'login ok']);
    assert.ok(!events.field_order.includes('fractal_id') && events.results.every((r: any) => !('fractal_id' in r) && !('log_id' in r)), 'event rows lose the appliance’s own ids');
    const text = JSON.stringify(pub.body);
    for (const secret of [fa.id, d.id, 'user=@who', 'groupBy(status)', 'alice"', 'ana', '"sql"', 'variables']) assert.ok(!text.includes(secret), `the public answer holds no ${secret}`);

    const page = await fetch(`${app.url}/shared/${link.token}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /text\/html/);
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/, 'the browser defences hold on the public page');
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');

    expectOk(await ana.del(`${DB}/${d.id}/shared-links/${link.id}`));
    expectError(await anonymous().get(`/api/v1/shared/${link.token}`), 404, 'does not exist, has expired, or is no longer shared');
    assert.equal((await fetch(`${app.url}/shared/${link.token}`)).status, 404);
    expectError(await ana.del(`${DB}/${d.id}/shared-links/${link.id}`), 404);

    const second = expectOk(await ana.post(`${DB}/${d.id}/shared-links`, {}), 201);
    expectOk(await anonymous().get(`/api/v1/shared/${second.token}`));
    await setLinks(false);
    expectError(await anonymous().get(`/api/v1/shared/${second.token}`), 404);
    assert.equal((await fetch(`${app.url}/shared/${second.token}`)).status, 404);
    expectError(await anonymous().get(`/api/v1/shared/svc_share_${'A'.repeat(43)}`), 404);
    await setLinks(true);
    expectError(await anonymous().get(`/api/v1/shared/svc_share_${'A'.repeat(43)}`), 404, 'does not exist');
    expectError(await anonymous().get(`/api/v1/shared/not-a-token`), 404);
    assert.equal(w1.dashboard_id, d.id);
  });

  test('who may make links, expiry, and query text only when the dashboard shows it', async () => {
    await setLinks(true);
    const d = await dashboard(ana, { name: 'Expiring' });
    await widget(ana, d.id, { title: 'Count', query_content: 'host=web1 | count()', chart_type: 'singleval' });
    expectError(await vic.post(`${DB}/${d.id}/shared-links`, {}), 403, 'analyst role');
    expectError(await oto.post(`${DB}/${d.id}/shared-links`, {}), 404, 'not found');
    expectError(await ana.post(`${DB}/${d.id}/shared-links`, { expires_at: daysAgo(1) }), 400, '"expires_at" must lie in the future');
    expectError(await ana.post(`${DB}/${d.id}/shared-links`, { expires_at: 'tomorrow' }), 400, '"expires_at" must be an RFC 3339 time');
    expectError(await keyNoDash.post(`${DB}/${d.id}/shared-links`, {}), 403);

    // Lives long enough to be read once on a busy machine, then is waited out.
    const soon = expectOk(await ana.post(`${DB}/${d.id}/shared-links`, { label: 'brief', expires_at: new Date(Date.now() + 10_000).toISOString() }), 201);
    const view = expectOk(await anonymous().get(`/api/v1/shared/${soon.token}`));
    assert.ok(!('query_content' in view.widgets[0]));
    assert.ok(!JSON.stringify(view).includes('host=web1'));
    await until(async () => (await anonymous().get(`/api/v1/shared/${soon.token}`)).status === 404, 'the link expires');
    assert.equal(expectOk(await ana.get(`${DB}/${d.id}/shared-links`))[0].expired, true);

    expectOk(await ana.put(`${DB}/${d.id}`, { shared_hide_queries: false }));
    const open = expectOk(await ana.post(`${DB}/${d.id}/shared-links`, {}), 201);
    const shown = expectOk(await anonymous().get(`/api/v1/shared/${open.token}`));
    assert.equal(shown.widgets[0].query_content, 'host=web1 | count()');
    assert.equal(shown.hide_queries, false);
  });

  test('a burst of public reads costs one query per widget per interval, counted at the engine', async () => {
    await setLinks(true);
    // A long interval first, so that however slow the machine, both bursts fall within one.
    const d = await dashboard(ana, { name: 'Burst', refresh_interval_s: 600 });
    for (const q of ['count()', 'groupBy(host)', 'groupBy(user) | sort(_count, order=desc)']) await widget(ana, d.id, { query_content: q });
    const link = expectOk(await ana.post(`${DB}/${d.id}/shared-links`, {}), 201);
    const runs = app.context.dashboardRuns;
    // Count the engine's statements themselves, not only the runner's tally.
    const ch = app.context.ch;
    const stream = ch.streamRows;
    let statements = 0;
    // While `held` is set, statements wait for it before reaching the engine: a refresh that takes long.
    let held: Promise<void> | null = null;
    ch.streamRows = (...args: Parameters<typeof stream>) => {
      statements++;
      const wait = held;
      if (!wait) return stream.apply(ch, args);
      return (async function* () {
        await wait;
        yield* stream.apply(ch, args);
      })();
    };
    const burst = async (n: number): Promise<string[][]> => {
      const answers = await Promise.all(Array.from({ length: n }, () => anonymous().get(`/api/v1/shared/${link.token}`)));
      return answers.map((r) => expectOk(r).widgets.map((w: any) => w.result.executed_at as string));
    };
    try {
      const n0 = runs.queriesRun;
      const s0 = statements;
      const first = await burst(60);
      assert.equal(runs.queriesRun - n0, 3, 'one query per widget for 60 readers at once');
      assert.equal(statements - s0, 3, 'three statements reached the engine');
      for (const r of first) assert.deepEqual(r, first[0], 'every reader got the same results');
      for (const r of await burst(60)) assert.deepEqual(r, first[0], 'the same results again');
      assert.equal(runs.queriesRun - n0, 3, 'no query while the results are younger than the interval');

      // At 5 s: a little before the results are 5 s old (twice the last build's time, at least 1 s)
      // a read starts one refresh per widget, in the background, so that a quick refresh lands
      // before the answer is a full interval old. While it runs (held here as long as it takes),
      // every reader gets the built answer at once.
      expectOk(await ana.put(`${DB}/${d.id}/refresh-interval`, { refresh_interval_s: 5 }));
      const oldest = Math.min(...first[0]!.map((t) => Date.parse(t)));
      let release = () => {};
      held = new Promise<void>((r) => (release = r));
      let refreshAt = 0;
      await until(async () => {
        for (const r of await burst(1)) assert.deepEqual(r, first[0], 'no reader waits for the refresh');
        if (statements - s0 > 3 && !refreshAt) refreshAt = Date.now();
        return refreshAt > 0;
      }, 'a read starts the refresh');
      assert.ok(refreshAt - oldest < 5_000, `the refresh started before the results were one interval old (at ${refreshAt - oldest} ms)`);
      // Long again, so that however slow the machine, no second refresh starts before the checks below.
      expectOk(await ana.put(`${DB}/${d.id}/refresh-interval`, { refresh_interval_s: 600 }));
      for (const r of await burst(40)) assert.deepEqual(r, first[0], 'nor while it runs, however long');
      const sent = Date.now();
      held = null;
      release();
      let refreshed: string[] = [];
      await until(async () => {
        refreshed = (await burst(1))[0]!;
        return refreshed.every((t, i) => t !== first[0]![i]);
      }, 'the refreshed results are answered');
      assert.ok(refreshed.every((t) => Date.parse(t) <= sent && Date.parse(t) - oldest < 5_000), `every widget ran again, before the interval was over: ${refreshed}`);
      for (const r of await burst(40)) assert.deepEqual(r, refreshed);
      assert.equal(runs.queriesRun - n0, 6, 'one more query per widget for the next interval');
      assert.equal(statements - s0, 6);
    } finally {
      ch.streamRows = stream;
    }
  });
});

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
