// match() (query-language.md §3.11) against real events and real dictionaries: logs arrive
// through the ingest endpoint, dictionaries are made and filled through their API, queries run
// through POST /api/v1/query and /query/validate on the embedded engine. Added columns, strict,
// later filters and aggregations, lookups after an aggregation, secondary key columns, the exact
// errors, which dictionaries a fractal, a prism or another tenant sees, and hostile values.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { grant } from '../support/api.ts';
import { col, fractalWith, ok, query, sampleEvents, spanOf } from '../support/query.ts';

let a: TestAppliance;
let admin: Client;
let fa: string;
let fb: string;
let prism: string;
let intel: string;

async function dictionary(body: Record<string, unknown>, rows: Array<Record<string, string>>): Promise<string> {
  const r = await admin.post('/api/v1/dictionaries', body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const id = r.body.data.id as string;
  const w = await admin.post(`/api/v1/dictionaries/${id}/rows`, { rows });
  assert.equal(w.status, 200, JSON.stringify(w.body));
  return id;
}

before(async () => {
  a = await startTestAppliance();
  admin = await signIn(a.url, 'admin', ADMIN_PASSWORD);
  fa = await fractalWith(a, admin, 'match-alpha', sampleEvents());
  fb = await fractalWith(a, admin, 'match-beta', sampleEvents().slice(0, 2).map((e) => ({ ...e, src_ip: '10.0.0.9' })));
  prism = (await admin.post('/api/v1/prisms', { name: 'match-both', fractal_ids: [fa, fb] })).body.data.id;
  intel = await dictionary({ name: 'threat_intel', columns: ['ip', 'threat_score', 'category', 'host'], key_columns: ['ip', 'host'], fractal_id: fa }, [
    { ip: '10.0.0.5', threat_score: '90', category: 'c2', host: 'web2' },
    { ip: '192.168.1.8', threat_score: '40', category: 'scanner', host: 'db1' },
    { ip: '8.8.8.8', threat_score: '5', category: 'dns', host: '' },
  ]);
  // Beta's own dictionary of the same name, and a global one.
  await dictionary({ name: 'threat_intel', columns: ['ip', 'category'], fractal_id: fb }, [{ ip: '10.0.0.5', category: 'beta-says-c2' }]);
  await dictionary({ name: 'users', columns: ['user', 'dept'], is_global: true }, [
    { user: 'alice', dept: 'it' },
    { user: 'bob', dept: "o'brien \\ \"ops\"; DROP TABLE logs --" },
  ]);
  await dictionary({ name: 'prism_notes', columns: ['src_ip', 'note'], prism_id: prism }, [
    { src_ip: '10.0.0.5', note: 'seen in alpha' },
    { src_ip: '10.0.0.9', note: 'seen in beta' },
  ]);
});
after(() => a.dispose());

const run = (q: string, scope: Record<string, string> = { fractal_id: fa }) => ok(admin, q, scope);
const MATCH = 'match(dict="threat_intel", field=src_ip, column=ip, include=[threat_score,category])';

describe('match() adds dictionary columns', () => {
  test('every event stays; matched ones get the columns under their own names, the rest empty', async () => {
    const r = await run(`* | ${MATCH}`);
    assert.equal(r.is_aggregated, false);
    assert.equal(r.chart_type, '');
    assert.equal(r.count, 8);
    assert.deepEqual(r.field_order.slice(-2), ['threat_score', 'category']);
    const byIp = new Map<string, Set<string>>();
    for (const row of r.results) {
      const k = String(row.src_ip ?? '');
      byIp.set(k, (byIp.get(k) ?? new Set()).add(`${row.threat_score}|${row.category}`));
    }
    assert.deepEqual(Object.fromEntries([...byIp].map(([k, v]) => [k, [...v]])), {
      '10.0.0.5': ['90|c2'],
      '192.168.1.8': ['40|scanner'],
      '192.168.1.7': ['|'],
      '172.16.0.9': ['|'],
      '10.0.0.6': ['|'],
      'not-an-ip': ['|'],
      '': ['|'],
    });
  });

  test('strict=true keeps only matched events; the histogram counts them too', async () => {
    const r = await run(`* | ${MATCH.replace(')', ', strict=true)')}`);
    assert.deepEqual(col(r, 'src_ip').sort(), ['10.0.0.5', '10.0.0.5', '192.168.1.8']);
    const h = r.histogram as Array<{ count: number }> | undefined;
    assert.ok(h, 'a histogram comes with the rows');
    assert.equal(h.reduce((n, b) => n + b.count, 0), 3);
  });

  test('later filters, sorts and aggregations read the added columns', async () => {
    const high = await run(`* | ${MATCH} | threat_score > 50`);
    assert.deepEqual(col(high, 'user').sort(), ['alice', 'alice']);
    const byCat = await run(`* | ${MATCH} | category != "" | groupBy(category) | sort(category)`);
    assert.equal(byCat.is_aggregated, true);
    assert.deepEqual(byCat.field_order, ['category', '_count']);
    assert.deepEqual(byCat.results.map((x) => [x.category, Number(x._count)]), [['c2', 2], ['scanner', 1]]);
  });

  test('after an aggregation it looks up a group column', async () => {
    const r = await run('* | groupBy(src_ip) | match(dict="threat_intel", field=src_ip, column=ip, include=[category]) | sort(src_ip)');
    assert.equal(r.is_aggregated, true);
    assert.deepEqual(r.field_order, ['src_ip', '_count', 'category']);
    const got = Object.fromEntries(r.results.map((x) => [x.src_ip, [Number(x._count), x.category]]));
    assert.deepEqual(got['10.0.0.5'], [2, 'c2']);
    assert.deepEqual(got['172.16.0.9'], [1, '']);
    const strict = await run('* | groupBy(src_ip) | match(dict="threat_intel", field=src_ip, column=ip, include=[category], strict=true) | category="scanner"');
    assert.deepEqual(strict.results.map((x) => x.src_ip), ['192.168.1.8']);
  });

  test('a second key column looks rows up by another value', async () => {
    const r = await run('host=web2 | match(dict=threat_intel, field=host, column=host, include=[ip, category])');
    assert.deepEqual(r.results.map((x) => [x.user, x.ip, x.category]).sort(), [
      ['alice', '10.0.0.5', 'c2'],
      ['dave', '10.0.0.5', 'c2'],
    ]);
  });

  test('an empty dictionary matches nothing: empty columns, and strict keeps no row', async () => {
    const r = await admin.post('/api/v1/dictionaries', { name: 'empty_one', columns: ['ip', 'note'], fractal_id: fa });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const loose = await run('* | match(dict=empty_one, field=src_ip, column=ip, include=[note])');
    assert.equal(loose.count, 8);
    assert.deepEqual([...new Set(col(loose, 'note'))], ['']);
    const strict = await run('* | match(dict=empty_one, field=src_ip, column=ip, include=[note], strict=true)');
    assert.equal(strict.count, 0);
  });

  test('rows written or replaced after a query show in the next one', async () => {
    const ref = (await admin.get(`/api/v1/dictionaries?fractal_id=${fa}`)).body.data.find((d: { name: string }) => d.name === 'threat_intel');
    assert.equal(ref.id, intel);
    const before = await run(`src_ip="172.16.0.9" | ${MATCH}`);
    assert.deepEqual(col(before, 'category'), ['']);
    const w = await admin.post(`/api/v1/dictionaries/${intel}/import?replace=true`, 'ip,threat_score,category,host\n172.16.0.9,70,db-exfil,db1\n', { 'content-type': 'text/csv' });
    assert.equal(w.status, 200, JSON.stringify(w.body));
    assert.deepEqual(col(await run(`src_ip="172.16.0.9" | ${MATCH}`), 'category'), ['db-exfil']);
    assert.deepEqual(col(await run(`src_ip="10.0.0.5" | ${MATCH}`), 'category'), ['', ''], 'replaced rows no longer match');
    // Put the original rows back for the other tests.
    await admin.post(`/api/v1/dictionaries/${intel}/rows`, {
      replace: true,
      rows: [
        { ip: '10.0.0.5', threat_score: '90', category: 'c2', host: 'web2' },
        { ip: '192.168.1.8', threat_score: '40', category: 'scanner', host: 'db1' },
        { ip: '8.8.8.8', threat_score: '5', category: 'dns', host: '' },
      ],
    });
  });
});

describe('which dictionaries a query sees', () => {
  test("a fractal's own dictionary wins over another tenant's of the same name", async () => {
    const r = await run(`src_ip="10.0.0.9" OR src_ip="10.0.0.5" | match(dict="threat_intel", field=src_ip, column=ip, include=[category])`, { fractal_id: fb });
    assert.deepEqual(col(r, 'category'), ['', ''], "beta's events are 10.0.0.9; beta's dictionary knows only 10.0.0.5");
    const inA = await run('src_ip="10.0.0.5" | match(dict="threat_intel", field=src_ip, column=ip, include=[category])');
    assert.deepEqual(col(inA, 'category'), ['c2', 'c2'], "alpha reads its own, never beta's");
  });

  test('a global dictionary serves every scope; a prism reads its own dictionary over every member', async () => {
    const users = await run('* | match(dict=users, field=user, column=user, include=[dept]) | dept!="" | groupBy(dept)', { fractal_id: fb });
    assert.deepEqual(users.results.map((x) => [x.dept, Number(x._count)]).sort(), [
      ['it', 1],
      ["o'brien \\ \"ops\"; DROP TABLE logs --", 1],
    ]);
    const p = await run('* | match(dict=prism_notes, field=src_ip, column=src_ip, include=[note], strict=true) | table(fractal_id, src_ip, note)', { prism_id: prism });
    const seen = new Set(p.results.map((x) => `${x.fractal_id}|${x.note}`));
    assert.deepEqual([...seen].sort(), [`${fa}|seen in alpha`, `${fb}|seen in beta`].sort());
    const fromFractal = await query(admin, '* | match(dict=prism_notes, field=src_ip, column=src_ip, include=[note])', { fractal_id: fa });
    assert.equal(fromFractal.status, 400, "a prism's dictionary is not a member fractal's");
  });

  test('a user with a role on beta only cannot reach alpha through a dictionary name', async () => {
    const bea = await makeUser(admin, 'bea');
    await grant(admin, fb, { username: 'bea' }, 'viewer');
    const r = await ok(bea, `src_ip="10.0.0.9" | match(dict="threat_intel", field=src_ip, column=ip, include=[category])`, { fractal_id: fb });
    assert.deepEqual(col(r, 'category'), ['', '']);
    const hidden = await query(bea, '* | count()', { fractal_id: fa });
    assert.equal(hidden.status, 404);
  });
});

describe('match() errors', () => {
  const err = async (q: string) => {
    const r = await query(admin, q, { fractal_id: fa });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error_type, 'translate');
    return r.body;
  };

  test('missing parameters, in the order the language names them', async () => {
    assert.equal((await err('* | match(field=src_ip, column=ip, include=[category])')).error, 'Query error: match() requires dict= parameter');
    assert.equal((await err('* | match(dict=threat_intel, column=ip, include=[category])')).error, 'Query error: match() requires field= parameter');
    assert.equal(
      (await err('* | match(dict=threat_intel, field=src_ip, column=ip)')).error,
      'Query error: match() requires include= parameter with at least one column',
    );
    assert.equal(
      (await err('* | match(dict=threat_intel, field=src_ip, include=[category])')).error,
      'Query error: match() requires column= parameter to specify the lookup key column',
    );
  });

  test('unknown dictionary, a column that is no key, an unknown include column, a bad strict', async () => {
    let q = '* | match(dict="nope", field=src_ip, column=ip, include=[category])';
    let e = await err(q);
    assert.equal(e.error, 'Query error: dictionary "nope" with key column "ip" not found');
    assert.deepEqual(e.error_pos, spanOf(q, 'dict="nope"'));
    e = await err('* | match(dict="threat_intel", field=src_ip, column=category, include=[ip])');
    assert.equal(e.error, 'Query error: dictionary "threat_intel" with key column "category" not found');
    q = '* | match(dict="threat_intel", field=src_ip, column=ip, include=[category, colour])';
    e = await err(q);
    assert.match(e.error!, /dictionary "threat_intel" has no column "colour" \(its columns: ip, threat_score, category, host\)/);
    assert.deepEqual(e.error_pos, spanOf(q, 'include=[category, colour]'));
    e = await err('* | match(dict="threat_intel", field=src_ip, column=ip, include=[category], strict=maybe)');
    assert.match(e.error!, /strict must be true or false/);
    e = await err(`* | match(dict="threat_intel'; DROP TABLE logs --", field=src_ip, column=ip, include=[category])`);
    assert.match(e.error!, /not found/);
  });

  test('validate resolves dictionaries as execution does', async () => {
    const good = await admin.post('/api/v1/query/validate', { query: `* | ${MATCH}`, fractal_id: fa });
    assert.equal(good.body.valid, true, JSON.stringify(good.body));
    const bad = await admin.post('/api/v1/query/validate', { query: `* | ${MATCH}`, prism_id: prism });
    assert.equal(bad.body.valid, false);
    assert.equal(bad.body.error, 'Query error: dictionary "threat_intel" with key column "ip" not found');
  });
});
