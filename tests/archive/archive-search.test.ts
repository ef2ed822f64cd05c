// Search in place from a local archive folder: a window the hot store no longer holds is answered
// from the archive (rows marked from_archive, the scanned files, bytes and rows reported), a mixed
// window has no log twice, include_archive reads what the hot store lost, the pipeline (groupBy,
// field equality, bare search) runs over the union, a damaged file is named and the rest answered,
// and another fractal's archive is never read.
import assert from 'node:assert/strict';
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { expectOk, grant } from '../support/api.ts';
import { ADMIN_PASSWORD, Client, makeUser, signIn, startTestAppliance, type TestAppliance } from '../support/appliance.ts';
import { ingestFractal, sendNdjson } from '../support/ingest.ts';
import { queryStream, sseFrames } from '../support/query.ts';
import { waitFor } from '../support/wait.ts';

let app: TestAppliance;
let admin: Client;
before(async () => {
  app = await startTestAppliance({ SVC_ARCHIVE_ROLL_S: '3600' });
  admin = await signIn(app.url, 'admin', ADMIN_PASSWORD);
  expectOk(await admin.put('/api/v1/archive', { enabled: true }));
  await archiveTwoFractals();
});
after(() => app.dispose());

async function archiveNow(fractalId: string, logs: number): Promise<void> {
  await waitFor(`${logs} logs to be archived`, async () => {
    await app.context.archive.archiver.flush();
    return app.context.archive.status(fractalId).logs >= logs;
  });
}

async function hotCount(fractalId: string): Promise<number> {
  const ch = app.context.ch;
  const rs = await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('logs')} WHERE fractal_id = {id:UUID}`, query_params: { id: fractalId }, format: 'JSONEachRow' });
  return Number(((await rs.json()) as Array<{ n: string }>)[0]!.n);
}

/** What hot retention does to old days: deletes them from the hot store (the archive keeps them). */
async function dropFromHot(fractalId: string, where: string): Promise<void> {
  const ch = app.context.ch;
  await ch.client.command({
    query: `ALTER TABLE ${ch.table('logs')} DELETE WHERE fractal_id = {id:UUID} AND ${where}`,
    query_params: { id: fractalId },
    clickhouse_settings: { mutations_sync: '2' },
  });
}

const query = async (client: Client, body: Record<string, unknown>) => {
  const r = await client.post('/api/v1/query', body);
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 600));
  assert.equal(r.body.success, true);
  return r.body;
};

const users = ['alice', 'bob', 'carol'];
const dayLogs = (day: string, n: number, tag: string, from = 0) =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return { timestamp: `${day}T${String(10 + (i % 10)).padStart(2, '0')}:00:00.${String(i).padStart(3, '0')}Z`, msg: `${tag} ${i}`, user: users[i % 3], host: `h${i % 2}` };
  });

let fractal: { id: string; token: string };
let other: { id: string; token: string };

async function archiveTwoFractals(): Promise<void> {
  fractal = await ingestFractal(admin, 'search-in-place');
  other = await ingestFractal(admin, 'search-other');
  // Day one in two rolls (two files), day two in a third; the other fractal archives the same days.
  await sendNdjson(app.url, fractal.token, dayLogs('2024-03-01', 60, 'day one'));
  await archiveNow(fractal.id, 60);
  await sendNdjson(app.url, fractal.token, dayLogs('2024-03-01', 60, 'day one', 60));
  await archiveNow(fractal.id, 120);
  await sendNdjson(app.url, fractal.token, dayLogs('2024-03-02', 80, 'day two'));
  await sendNdjson(app.url, other.token, dayLogs('2024-03-01', 50, 'other tenant'));
  await archiveNow(fractal.id, 200);
  await archiveNow(other.id, 50);
  await waitFor('the hot store to hold every log', async () => (await hotCount(fractal.id)) === 200 && (await hotCount(other.id)) === 50);
  // Hot retention took day one of both fractals.
  await dropFromHot(fractal.id, "timestamp < '2024-03-02 00:00:00'");
  await dropFromHot(other.id, "timestamp < '2024-03-02 00:00:00'");
  assert.equal(await hotCount(fractal.id), 80);
}

const DAY_ONE = { start: '2024-03-01T00:00:00Z', end: '2024-03-01T23:59:59.999Z' };
const BOTH_DAYS = { start: '2024-03-01T00:00:00Z', end: '2024-03-02T23:59:59.999Z' };

test('a window before the hot store\'s oldest log is answered from the archive, rows marked, the scan reported', async () => {
  const r = await query(admin, { query: '', fractal_id: fractal.id, ...DAY_ONE });
  assert.equal(r.count, 120);
  assert.ok(r.results.every((row: any) => row.from_archive === true && row.fractal_id === fractal.id));
  assert.deepEqual(r.results.map((row: any) => row.msg).sort(), dayLogs('2024-03-01', 120, 'day one').map((l) => l.msg).sort());
  assert.equal(r.results[0].timestamp, '2024-03-01 19:00:00.119', 'the same shape and time text as hot rows');
  assert.deepEqual(Object.keys(r.archive).sort(), ['bytes_scanned', 'files_scanned', 'rows_scanned']);
  assert.equal(r.archive.files_scanned, 2);
  assert.equal(r.archive.rows_scanned, 120);
  assert.ok(r.archive.bytes_scanned > 0);
  assert.ok(r.histogram.reduce((n: number, b: any) => n + b.count, 0) === 120, 'the histogram counts archived rows');
  // A window the hot store holds does not read the archive, though the archive holds it too.
  const hot = await query(admin, { query: '', fractal_id: fractal.id, start: '2024-03-02T00:00:00Z', end: '2024-03-02T23:59:59Z' });
  assert.equal(hot.count, 80);
  assert.equal(hot.archive, undefined);
  assert.ok(hot.results.every((row: any) => !('from_archive' in row)));
});

test('a mixed window: every log once, archived ones marked; the pipeline runs over the union', async () => {
  const r = await query(admin, { query: '', fractal_id: fractal.id, ...BOTH_DAYS });
  assert.equal(r.count, 200);
  assert.equal(new Set(r.results.map((row: any) => row.log_id)).size, 200, 'no log twice');
  assert.equal(r.results.filter((row: any) => row.from_archive).length, 120);
  assert.ok(r.results.filter((row: any) => !row.from_archive).every((row: any) => row.msg.startsWith('day two')));

  const grouped = await query(admin, { query: 'groupBy(user) | sort(user)', fractal_id: fractal.id, ...BOTH_DAYS });
  assert.deepEqual(
    grouped.results.map((row: any) => [row.user, row._count]),
    users.map((u, k) => [u, dayLogs('2024-03-01', 120, '').filter((l) => l.user === u).length + dayLogs('2024-03-02', 80, '').filter((l) => l.user === users[k]).length]),
  );
  assert.equal(grouped.archive.rows_scanned, 120);

  // Field equality and bare search drop archived rows before parsing them: the answers stay exact.
  const bob = await query(admin, { query: 'user=bob host=h1', fractal_id: fractal.id, ...BOTH_DAYS });
  const want = [...dayLogs('2024-03-01', 120, 'day one'), ...dayLogs('2024-03-02', 80, 'day two')].filter((l) => l.user === 'bob' && l.host === 'h1');
  assert.deepEqual(bob.results.map((row: any) => row.msg).sort(), want.map((l) => l.msg).sort());
  const text = await query(admin, { query: '"DAY ONE 11" | count()', fractal_id: fractal.id, ...BOTH_DAYS });
  assert.equal(text.results[0]._count, 11, '"day one 11" and 110…119');
  const stats = await query(admin, { query: 'user=~AL,car | groupBy(user) | sort(user)', fractal_id: fractal.id, ...DAY_ONE });
  assert.deepEqual(stats.results.map((row: any) => [row.user, row._count]), [['alice', 40], ['carol', 40]]);
});

test('include_archive reads what the hot store lost, without the logs it holds; bad values refused', async () => {
  // The hot store lost five logs of day two (a wiped part); the archive has them.
  const lost = dayLogs('2024-03-02', 80, 'day two').slice(1, 6).map((l) => l.msg); // not the oldest
  await dropFromHot(fractal.id, `JSONExtractString(raw, 'msg') IN (${lost.map((m) => `'${m}'`).join(', ')})`);
  const dayTwo = { start: '2024-03-02T00:00:00Z', end: '2024-03-02T23:59:59Z' };
  const plain = await query(admin, { query: '', fractal_id: fractal.id, ...dayTwo });
  assert.equal(plain.count, 75, 'without include_archive a window from the hot store\'s oldest log on is the hot store');
  const asked = await query(admin, { query: '', fractal_id: fractal.id, ...dayTwo, include_archive: true });
  assert.equal(asked.count, 80);
  assert.equal(new Set(asked.results.map((row: any) => row.log_id)).size, 80);
  assert.deepEqual(asked.results.filter((row: any) => row.from_archive).map((row: any) => row.msg).sort(), [...lost].sort());
  assert.equal(asked.archive.files_scanned, 1);
  const everything = await query(admin, { query: 'count()', fractal_id: fractal.id, ...BOTH_DAYS, include_archive: true });
  assert.equal(everything.results[0]._count, 200);
  const bad = await admin.post('/api/v1/query', { query: '', fractal_id: fractal.id, include_archive: 'yes' });
  assert.equal(bad.status, 400);
});

test('another fractal\'s archive is never read; a user reads only the archive of fractals they may read', async () => {
  const r = await query(admin, { query: '"other tenant"', fractal_id: fractal.id, ...DAY_ONE, include_archive: true });
  assert.equal(r.count, 0);
  assert.equal(r.archive.files_scanned, 2, 'only this fractal\'s files');
  const mine = await query(admin, { query: '', fractal_id: other.id, ...DAY_ONE });
  assert.equal(mine.count, 50);
  assert.ok(mine.results.every((row: any) => row.fractal_id === other.id && row.from_archive));

  const analyst = await makeUser(admin, 'archive-analyst');
  await grant(admin, other.id, { username: 'archive-analyst' }, 'viewer');
  const own = await query(analyst, { query: '', fractal_id: other.id, ...DAY_ONE });
  assert.equal(own.count, 50);
  const refused = await analyst.post('/api/v1/query', { query: '', fractal_id: fractal.id, ...DAY_ONE, include_archive: true });
  assert.ok([403, 404].includes(refused.status), `${refused.status}`);
});

test('an archived file damaged after it was read: the query answers the rest and names the file in a warning', async () => {
  const damagedFractal = await ingestFractal(admin, 'search-damaged');
  await sendNdjson(app.url, damagedFractal.token, dayLogs('2024-02-01', 30, 'kept'));
  await archiveNow(damagedFractal.id, 30);
  await sendNdjson(app.url, damagedFractal.token, dayLogs('2024-02-01', 20, 'lost', 30));
  await archiveNow(damagedFractal.id, 50);
  await waitFor('the hot store', async () => (await hotCount(damagedFractal.id)) === 50);
  await dropFromHot(damagedFractal.id, '1 = 1');
  const files = app.context.archive.store.files(damagedFractal.id);
  assert.equal(files.length, 2);
  const bad = files.find((f) => f.rows === 20)!;
  const window = { start: '2024-02-01T00:00:00Z', end: '2024-02-01T23:59:59Z' };
  // Both files read (and checked) first; the damage comes after.
  assert.equal((await query(admin, { query: '', fractal_id: damagedFractal.id, ...window })).count, 50);
  writeFileSync(path.join(app.dataDir, 'archive', damagedFractal.id, bad.key), 'not parquet at all');
  for (const q of ['', 'groupBy(user)']) {
    const r = await query(admin, { query: q, fractal_id: damagedFractal.id, ...window });
    const total = q ? r.results.reduce((n: number, row: any) => n + row._count, 0) : r.count;
    assert.equal(total, 30, `${q || 'search'}: the readable file answers`);
    assert.equal(r.warnings.length, 1);
    assert.ok(r.warnings[0].includes(bad.key), r.warnings[0]);
    assert.match(r.warnings[0], /could not be read/);
    assert.deepEqual([r.archive.files_scanned, r.archive.rows_scanned], [1, 30]);
  }
});

test('damage inside a file whose footer still reads: the query is run again without it, answers the rest and names the file', async () => {
  const fractal = await ingestFractal(admin, 'search-damaged-inside');
  await sendNdjson(app.url, fractal.token, dayLogs('2024-03-01', 30, 'kept'));
  await archiveNow(fractal.id, 30);
  await sendNdjson(app.url, fractal.token, dayLogs('2024-03-01', 400, 'lost', 30).map((l) => ({ ...l, pad: 'p'.repeat(300) + l.msg })));
  await archiveNow(fractal.id, 430);
  await waitFor('the hot store', async () => (await hotCount(fractal.id)) === 430);
  await dropFromHot(fractal.id, '1 = 1');
  const bad = app.context.archive.store.files(fractal.id).find((f) => f.rows === 400)!;
  const window = { fractal_id: fractal.id, start: '2024-03-01T00:00:00Z', end: '2024-03-01T23:59:59Z' };
  assert.equal((await query(admin, { query: '', ...window })).count, 430, 'both files read (and their footers checked) first');

  // Bytes of the column data changed in place: same size, same modification time, the footer intact.
  const file = path.join(app.dataDir, 'archive', fractal.id, bad.key);
  const { mtime, atime, size } = statSync(file);
  const bytes = readFileSync(file);
  for (let i = Math.floor(size * 0.2); i < Math.floor(size * 0.5); i++) bytes[i] = (bytes[i]! * 7 + 13) & 255;
  writeFileSync(file, bytes);
  utimesSync(file, atime, mtime);
  assert.equal(app.context.archive.search.leaveOutFailedFile('no file named here'), false);

  const r = await query(admin, { query: 'groupBy(user)', ...window });
  assert.equal(r.results.reduce((n: number, row: any) => n + row._count, 0), 30, 'the readable file answers');
  assert.equal(r.warnings.length, 1);
  assert.ok(r.warnings[0].includes(bad.key), r.warnings[0]);

  // The stream (what the search page reads) answers the same way, its last meta frame naming the file.
  app.context.archive.search.forgetChecks();
  const frames = await sseFrames(await queryStream(admin, { query: '', ...window }));
  assert.equal(frames.filter((f) => f.event === 'error').length, 0, JSON.stringify(frames.filter((f) => f.event === 'error')));
  const metas = frames.filter((f) => f.event === 'meta');
  assert.ok(metas.at(-1)!.data.warnings[0].includes(bad.key));
  assert.equal(frames.filter((f) => f.event === 'rows').reduce((n, f) => n + f.data.rows.length, 0), 30);
});
