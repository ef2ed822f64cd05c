// STANDARD per-row commands of query-language.md §3.3–3.5 (string, field and time functions)
// against real events ingested through the ingest endpoint: rows, column names, field_order,
// is_aggregated, the spec's examples, Unicode, errors, and values that must stay values.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { col, query, queryDataset } from '../support/query.ts';

// ---- An independent CityHash64 (v1.0.2, the version ClickHouse's cityHash64 uses), transcribed
// from Google's reference C++ with BigInt arithmetic, so `hash()` is checked against the
// algorithm rather than against the engine computing the same expression.
const M64 = (1n << 64n) - 1n;
const k0 = 0xc3a5c85c97cb3127n;
const k1 = 0xb492b66fbe98f273n;
const k2 = 0x9ae16a3b2f90404fn;
const k3 = 0xc949d7c7509e6557n;
const mul = (a: bigint, b: bigint) => (a * b) & M64;
const add = (...xs: bigint[]) => xs.reduce((s, x) => (s + x) & M64, 0n);
const sub = (a: bigint, b: bigint) => (a - b) & M64;
const rot = (v: bigint, s: number) => (s === 0 ? v : ((v >> BigInt(s)) | (v << BigInt(64 - s))) & M64);
const shiftMix = (v: bigint) => v ^ (v >> 47n);
function hash128to64(lo: bigint, hi: bigint): bigint {
  const kMul = 0x9ddfea08eb382d69n;
  let a = mul(lo ^ hi, kMul);
  a ^= a >> 47n;
  let b = mul(hi ^ a, kMul);
  b ^= b >> 47n;
  return mul(b, kMul);
}
function cityHash64(s: Uint8Array): bigint {
  const f64 = (i: number) => {
    let v = 0n;
    for (let j = 7; j >= 0; j--) v = (v << 8n) | BigInt(s[i + j]);
    return v;
  };
  const f32 = (i: number) => {
    let v = 0n;
    for (let j = 3; j >= 0; j--) v = (v << 8n) | BigInt(s[i + j]);
    return v;
  };
  const len = s.length;
  const L = BigInt(len);
  const weak = (i: number, a: bigint, b: bigint): [bigint, bigint] => {
    a = add(a, f64(i));
    b = rot(add(b, a, f64(i + 24)), 21);
    const c = a;
    a = add(a, f64(i + 8), f64(i + 16));
    b = add(b, rot(a, 44));
    return [add(a, f64(i + 24)), add(b, c)];
  };
  if (len <= 16) {
    if (len > 8) {
      const b = f64(len - 8);
      return hash128to64(f64(0), rot(add(b, L), len)) ^ b;
    }
    if (len >= 4) return hash128to64(add(L, (f32(0) << 3n) & M64), f32(len - 4));
    if (len > 0) {
      const y = (BigInt(s[0]) + (BigInt(s[len >> 1]) << 8n)) & 0xffffffffn;
      const z = (L + (BigInt(s[len - 1]) << 2n)) & 0xffffffffn;
      return mul(shiftMix(mul(y, k2) ^ mul(z, k3)), k2);
    }
    return k2;
  }
  if (len <= 32) {
    const a = mul(f64(0), k1);
    const b = f64(8);
    const c = mul(f64(len - 8), k2);
    const d = mul(f64(len - 16), k0);
    return hash128to64(add(rot(sub(a, b), 43), rot(c, 30), d), add(a, rot(b ^ k3, 20), sub(0n, c), L));
  }
  if (len <= 64) {
    let z = f64(24);
    let a = add(f64(0), mul(add(L, f64(len - 16)), k0));
    let b = rot(add(a, z), 52);
    let c = rot(a, 37);
    a = add(a, f64(8));
    c = add(c, rot(a, 7));
    a = add(a, f64(16));
    const vf = add(a, z);
    const vs = add(b, rot(a, 31), c);
    a = add(f64(16), f64(len - 32));
    z = f64(len - 8);
    b = rot(add(a, z), 52);
    c = rot(a, 37);
    a = add(a, f64(len - 24));
    c = add(c, rot(a, 7));
    a = add(a, f64(len - 16));
    const wf = add(a, z);
    const ws = add(b, rot(a, 31), c);
    const r = shiftMix(add(mul(add(vf, ws), k2), mul(add(wf, vs), k0)));
    return mul(shiftMix(add(mul(r, k0), vs)), k2);
  }
  let x = f64(0);
  let y = f64(len - 16) ^ k1;
  let z = f64(len - 56) ^ k0;
  let v = weak(len - 64, L, y);
  let w = weak(len - 32, mul(L, k1), k0);
  z = add(z, mul(shiftMix(v[1]), k1));
  x = mul(rot(add(z, x), 39), k1);
  y = mul(rot(y, 33), k1);
  let n = (len - 1) & ~63;
  let i = 0;
  do {
    x = mul(rot(add(x, y, v[0], f64(i + 16)), 37), k1);
    y = mul(rot(add(y, v[1], f64(i + 48)), 42), k1);
    x ^= w[1];
    y ^= v[0];
    z = rot(z ^ w[0], 33);
    v = weak(i, mul(v[1], k1), add(x, w[0]));
    w = weak(i + 32, add(z, w[1]), y);
    [z, x] = [x, z];
    i += 64;
    n -= 64;
  } while (n !== 0);
  return hash128to64(add(hash128to64(v[0], w[0]), mul(shiftMix(y), k1), z), add(hash128to64(v[1], w[1]), x));
}
/** The spec's hash(): cityHash64 of the values (several combined as ClickHouse does), upper-case hex without leading zero bytes. */
function expectedHash(...values: string[]): string {
  let h = 0n;
  values.forEach((value, i) => {
    const x = cityHash64(new TextEncoder().encode(value));
    h = i === 0 ? x : hash128to64(h, x);
  });
  const hex = h.toString(16).toUpperCase();
  return hex.length % 2 ? `0${hex}` : hex;
}

// ---- Dataset ------------------------------------------------------------------------------------

const utf16le = (s: string) => Buffer.from(s, 'utf16le').toString('base64');
const QUOTE = `it's "q" \\ x'); DROP TABLE logs; --`;
const base = Date.now();
const minutesAgo = (m: number) => new Date(base - m * 60_000).toISOString();

/** Four events, newest first. `when` holds times in the lenient forms strftime() reads. */
const EVENTS = [
  {
    timestamp: minutesAgo(1),
    user: 'Admin',
    host: 'web1',
    hostname: 'web1',
    email: 'alice@example.com',
    process_name: 'svch0st.exe',
    encoded: Buffer.from('invoke-expression get-process').toString('base64'),
    request_uri: '/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E+x',
    name: 'zoë',
    card: '4111222233334444',
    when: '1767618249123',
    port: 8443,
    path: 'index.html',
    level: 'warn',
    account_name: 'acct-a',
    bytes: 1500,
    duration: 3,
    commandline: `powershell -enc ${'A'.repeat(1000)}`,
    quote: QUOTE,
  },
  {
    timestamp: minutesAgo(2),
    user: 'bob',
    host: 'web2',
    email: 'bob@corp.example.org',
    process_name: 'svchost.exe',
    encoded: utf16le('Invoke-Expression'),
    request_uri: '/a%20b+c',
    name: 'ÆSIR',
    when: '2026-01-05T13:04:09Z',
    username: 'bobby',
    level: 'Warn',
    bytes: 'abc',
    duration: 0,
    commandline: 'cmd.exe /c dir',
  },
  {
    timestamp: minutesAgo(3),
    user: 'user138',
    host: 'web1',
    email: 'carol',
    process_name: 'explorer.exe',
    encoded: 'not base64!',
    request_uri: '%zz%E2%9C%93',
    name: 'straße',
    when: '1767618249123456789',
    level: 'info',
    bytes: 10,
    duration: 4,
  },
  {
    timestamp: minutesAgo(4),
    user: 'ADMIN',
    host: 'db1',
    email: '',
    when: 'garbage',
    name: '日本語🔥',
    card: '12',
    level: 'error',
    bytes: 7.5,
    duration: 2.5,
  },
];
const TIMES = EVENTS.map((e) => e.timestamp);
const EVENT_TAIL = ['timestamp', 'log_id', 'fractal_id', 'norm_log'];

const data = queryDataset('strings', () => EVENTS);

const { run } = data;
/** A query that must fail to compile: its `Query error: …` message. */
async function compileError(q: string): Promise<string> {
  const r = await query(data.admin, q, { fractal_id: data.fractal });
  assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.error_type, 'translate', `${q}: ${JSON.stringify(r.body)}`);
  return r.body.error!;
}
/** A per-row query on events: not aggregated, computed columns first, then the fixed ones. */
async function rows(q: string, computed: string[]) {
  const r = await run(q);
  assert.equal(r.is_aggregated, false, q);
  assert.deepEqual(r.field_order, [...computed, ...EVENT_TAIL], q);
  return r;
}

describe('replace', () => {
  test('replaces every match into the output column; the field is kept', async () => {
    const r = await rows(String.raw`* | replace("\\d{4}", "XXXX", card, card_masked)`, ['card_masked']);
    assert.deepEqual(col(r, 'card_masked'), ['XXXXXXXXXXXXXXXX', '', '', '12']);
    assert.deepEqual(col(r, 'card'), ['4111222233334444', undefined, undefined, '12']);
  });

  test('\\1…\\9 are groups and \\0 the whole match', async () => {
    const r = await run(String.raw`* | replace("(\\w+)@(\\w+)", "\\2 at \\1", email, swapped) | replace("[aeiou]", "<\\0>", user, marked)`);
    assert.deepEqual(r.field_order, ['swapped', 'marked', ...EVENT_TAIL]);
    assert.deepEqual(col(r, 'swapped'), ['example at alice.com', 'corp at bob.example.org', 'carol', '']);
    assert.deepEqual(col(r, 'marked'), ['Adm<i>n', 'b<o>b', '<u>s<e>r138', 'ADMIN']);
  });

  test('without an output the field is overwritten for the rest of the pipeline; default field is norm_log', async () => {
    const r = await rows('* | replace("@.*", "", email) | email=alice', ['email']);
    assert.deepEqual(col(r, 'email'), ['alice']);
    const n = await run('* | replace("svch0st", "SVCHOST")');
    assert.deepEqual(n.field_order, ['norm_log', 'timestamp', 'log_id', 'fractal_id']);
    assert.match(n.results[0].norm_log, /"process_name":"SVCHOST.exe"/);
    assert.equal(n.results[0].process_name, 'svch0st.exe');
  });

  test('as= is rejected, a missing group and a bad pattern are errors', async () => {
    assert.match(await compileError('* | replace("a", "b", user, as=x)'), /^Query error: replace\(\): invalid output field: as=x/);
    assert.match(await compileError(String.raw`* | replace("(a)", "\\2", user)`), /^Query error: replace\(\): the replacement refers to group \\2 but the pattern has 1 capture group$/);
    assert.match(await compileError('* | replace("a")'), /^Query error: replace\(\) requires a pattern and a replacement/);
    assert.match(await compileError('* | replace("(a", "b", user)'), /invalid regular expression "\(a"/);
  });
});

describe('concat', () => {
  test('joins fields without a separator, absent fields empty, timestamp as text', async () => {
    const r = await rows('* | concat([user, host], as=user_host)', ['user_host']);
    assert.deepEqual(col(r, 'user_host'), ['Adminweb1', 'bobweb2', 'user138web1', 'ADMINdb1']);
    const d = await rows('* | concat([user, missing, timestamp])', ['_concat']);
    assert.deepEqual(col(d, '_concat'), EVENTS.map((e) => e.user + e.timestamp.replace('T', ' ').replace('Z', '')));
  });
});

describe('lowercase and uppercase', () => {
  test('* | lowercase(user) | user=admin overwrites the field before the filter', async () => {
    const r = await rows('* | lowercase(user) | user=admin', ['user']);
    assert.deepEqual(col(r, 'user'), ['admin', 'admin']);
    const o = await rows('* | lowercase(user, lower_user) | lower_user=admin', ['lower_user']);
    assert.deepEqual(col(o, 'user'), ['Admin', 'ADMIN']);
  });

  test('Unicode case mapping', async () => {
    const r = await rows('* | uppercase(name)', ['name']);
    assert.deepEqual(col(r, 'name'), ['ZOË', 'ÆSIR', 'STRASSE', '日本語🔥']);
    const l = await rows('* | lowercase(name, low)', ['low']);
    assert.deepEqual(col(l, 'low'), ['zoë', 'æsir', 'straße', '日本語🔥']);
  });

  test('* | uppercase(level) | groupBy(level)', async () => {
    const r = await run('* | uppercase(level) | groupBy(level) | sort(level)');
    assert.deepEqual(r.results, [
      { level: 'ERROR', _count: 1 },
      { level: 'INFO', _count: 1 },
      { level: 'WARN', _count: 2 },
    ]);
  });

  test('after an aggregation the transform reads the group column', async () => {
    const r = await run('groupBy(user) | lowercase(user) | sort(user)');
    assert.deepEqual(r.field_order, ['user', '_count']);
    assert.deepEqual(col(r, 'user'), ['admin', 'admin', 'bob', 'user138']);
    assert.equal(r.is_aggregated, true);
  });
});

describe('len and logSize', () => {
  test('len counts code points and is a number', async () => {
    const r = await rows('* | len(name)', ['_len']);
    assert.deepEqual(col(r, '_len'), [3, 4, 6, 4]);
    const m = await rows('* | len(nothing, as=n)', ['n']);
    assert.deepEqual(col(m, 'n'), [0, 0, 0, 0]);
  });

  test('* | len(commandline) | _len > 1000 | sort(_len, desc)', async () => {
    const r = await rows('* | len(commandline) | _len > 1000 | sort(_len, desc)', ['_len']);
    assert.deepEqual(col(r, '_len'), [1016]);
    const s = await run('* | len(commandline) | sort(_len, desc)');
    assert.deepEqual(col(s, '_len'), [1016, 14, 0, 0]);
  });

  test('logSize is the byte size of the whole event by default, or of a field', async () => {
    const r = await rows('* | logSize()', ['_size']);
    for (const row of r.results) assert.equal(row._size, Buffer.byteLength(row.norm_log));
    const f = await rows('* | logSize(name, as=name_bytes)', ['name_bytes']);
    assert.deepEqual(col(f, 'name_bytes'), [4, 5, 7, 13]);
    const g = await run('* | logSize() | groupBy(host, function=sum(_size)) | sort(host)');
    assert.deepEqual(g.field_order, ['host', '_sum']);
    assert.deepEqual(col(g, 'host'), ['db1', 'web1', 'web2']);
    assert.equal(g.results[1]._sum, r.results[0]._size + r.results[2]._size);
  });
});

describe('levenshtein', () => {
  test('* | base := "svchost.exe" | levenshtein(process_name, base) | _distance < 3', async () => {
    const r = await run('* | base := "svchost.exe" | levenshtein(process_name, base) | _distance < 3');
    assert.deepEqual(r.field_order, ['base', '_distance', ...EVENT_TAIL]);
    assert.deepEqual(col(r, 'process_name'), ['svch0st.exe', 'svchost.exe']);
    assert.deepEqual(col(r, '_distance'), [1, 0]);
  });

  test('counts characters, transpositions as one edit; an absent field is empty', async () => {
    const r = await run('* | user=Admin | t := "dAmin" | levenshtein(user, t)');
    assert.equal(r.results[0]._distance, 1);
    const u = await run('* | z := "zoe" | levenshtein(name, z)');
    assert.deepEqual(col(u, '_distance'), [1, 4, 5, 4]);
    const m = await run('* | base := "abc" | levenshtein(nothing, base)');
    assert.deepEqual(col(m, '_distance'), [3, 3, 3, 3]);
    const t = await run('* | x := "ab" | y := "ba" | levenshtein(x, y) | head(1)');
    assert.equal(t.results[0]._distance, 1);
  });

  test('needs exactly two fields', async () => {
    assert.match(await compileError('* | levenshtein(user)'), /^Query error: levenshtein\(\) requires two fields/);
  });
});

describe('base64Decode', () => {
  test('decodes text, UTF-16LE too; invalid or absent is empty', async () => {
    const r = await rows('* | base64Decode(encoded)', ['_decoded']);
    assert.deepEqual(col(r, '_decoded'), ['invoke-expression get-process', 'Invoke-Expression', '', '']);
    const f = await run('* | base64Decode(encoded) | _decoded=/invoke-expression/i');
    assert.equal(f.count, 2);
  });
});

describe('split', () => {
  test('* | split(email, "@", 2) | groupBy(_split)', async () => {
    const r = await run('* | split(email, "@", 2) | groupBy(_split) | sort(_split)');
    assert.deepEqual(r.results, [
      { _split: '', _count: 2 },
      { _split: 'corp.example.org', _count: 1 },
      { _split: 'example.com', _count: 1 },
    ]);
  });

  test('negative indexes count from the end; 0 and out of range are empty', async () => {
    assert.deepEqual(col(await rows('* | split(email, ".", "-1")', ['_split']), '_split'), ['com', 'org', 'carol', '']);
    assert.deepEqual(col(await run('* | split(email, ".", 0)'), '_split'), ['', '', '', '']);
    assert.deepEqual(col(await run('* | split(email, ".", 9)'), '_split'), ['', '', '', '']);
    assert.deepEqual(col(await run('* | split(name, "", 3)'), '_split'), ['ë', 'I', 'r', '語']);
  });

  test('errors: a non-integer index, missing arguments', async () => {
    assert.equal(await compileError('* | split(email, "@", x)'), 'Query error: split(): index must be numeric, got "x"');
    assert.equal(await compileError('* | split(email, "@", "1.5")'), 'Query error: split(): index must be numeric, got "1.5"');
    assert.match(await compileError('* | split(email, "@")'), /^Query error: split\(\) requires a field, a delimiter and an index/);
  });
});

describe('substr', () => {
  test('1-based start and length in characters; negative start from the end', async () => {
    assert.deepEqual(col(await rows('* | substr(name, 2, 2)', ['_substr']), '_substr'), ['oë', 'SI', 'tr', '本語']);
    assert.deepEqual(col(await run('* | substr(name, "-2")'), '_substr'), ['oë', 'IR', 'ße', '語🔥']);
    const t = await run('* | substr(card, 1, 8) | table(card, _substr)');
    assert.deepEqual(t.field_order, ['card', '_substr', 'timestamp', 'fractal_id']);
    assert.deepEqual(col(t, '_substr'), ['41112222', '', '', '12']);
  });

  test('errors name the argument', async () => {
    assert.equal(await compileError('* | substr(name, x)'), 'Query error: substr(): start must be numeric, got "x"');
    assert.equal(await compileError('* | substr(name, 1, "2.5")'), 'Query error: substr(): length must be numeric, got "2.5"');
    assert.match(await compileError('* | substr(name)'), /^Query error: substr\(\) requires a field and a start/);
  });
});

describe('urldecode', () => {
  test('percent-decoding, + unchanged, malformed escapes kept', async () => {
    const r = await rows('* | urldecode(request_uri)', ['_urldecoded']);
    assert.deepEqual(col(r, '_urldecoded'), ['/search?q=<script>alert(1)</script>+x', '/a b+c', '%zz✓', '']);
    assert.equal((await run('* | urldecode(request_uri) | _urldecoded=/<script/i')).count, 1);
  });
});

describe('coalesce', () => {
  test('first non-empty value, else empty', async () => {
    const r = await rows('* | coalesce(username, user)', ['_coalesced']);
    assert.deepEqual(col(r, '_coalesced'), ['Admin', 'bobby', 'user138', 'ADMIN']);
    const g = await run('* | coalesce(username, account_name, missing) | groupBy(_coalesced) | sort(_coalesced)');
    assert.deepEqual(g.results, [
      { _coalesced: '', _count: 2 },
      { _coalesced: 'acct-a', _count: 1 },
      { _coalesced: 'bobby', _count: 1 },
    ]);
  });

  test('needs at least two fields', async () => {
    assert.match(await compileError('* | coalesce(user)'), /^Query error: coalesce\(\) requires at least 2 fields/);
  });
});

describe('sprintf', () => {
  test('the spec example; absent values are empty', async () => {
    const r = await rows('* | sprintf("https://%s:%s/%s", hostname, port, path, as=url)', ['url']);
    assert.deepEqual(col(r, 'url'), ['https://web1:8443/index.html', 'https://:/', 'https://:/', 'https://:/']);
  });

  test('C conversions with flags, width and precision; text that is not a number gives an empty piece', async () => {
    const r = await rows('* | sprintf("%05d|%-6s|%.2f|%x|%%|%c|%3d", port, user, duration, port, user, bytes)', ['_sprintf']);
    assert.deepEqual(col(r, '_sprintf'), [
      '08443|Admin |3.00|20fb|%|A|1500',
      '|bob   |0.00||%|b|',
      '|user138|4.00||%|u| 10',
      '|ADMIN |2.50||%|A|  7',
    ]);
    const f = await run('* | sprintf("<%s>", field=name) | head(1)');
    assert.equal(f.results[0]._sprintf, '<日本語🔥>');
  });

  test('requires a format', async () => {
    assert.match(await compileError('* | sprintf()'), /^Query error: sprintf\(\) requires a format string/);
  });
});

describe('eval', () => {
  test('eval("name = expression") and eval(name=expression) are float arithmetic', async () => {
    const r = await rows('* | eval("rate = bytes / duration")', ['rate']);
    assert.deepEqual(col(r, 'rate'), [500, null, 2.5, 3]);
    const k = await rows('* | eval(rate=bytes / duration, twice=bytes * 2)', ['rate', 'twice']);
    assert.deepEqual(col(k, 'rate'), [500, null, 2.5, 3]);
    assert.deepEqual(col(k, 'twice'), [3000, null, 20, 15]);
    assert.equal((await run('* | eval("rate = bytes / duration") | rate > 100')).count, 1);
  });

  test('a plain name is a copy; later assignments see earlier ones; timestamp is arithmetic (epoch ms)', async () => {
    const r = await rows('* | eval("who = user", "a = bytes * 2", "b = a + 1")', ['who', 'a', 'b']);
    assert.deepEqual(col(r, 'who'), ['Admin', 'bob', 'user138', 'ADMIN']);
    assert.deepEqual(col(r, 'b'), [3001, null, 21, 16]);
    const t = await run('* | eval(t=timestamp)');
    assert.deepEqual(col(t, 't'), TIMES.map((x) => Date.parse(x)));
  });

  test('after an aggregation it reads the outputs', async () => {
    const r = await run('groupBy(host) | eval("double = _count * 2") | sort(host)');
    assert.deepEqual(r.field_order, ['host', '_count', 'double']);
    assert.deepEqual(r.results[1], { host: 'web1', _count: 2, double: 4 });
  });

  test('errors', async () => {
    assert.equal(await compileError('* | eval("nothing")'), 'Query error: eval() expects "name = expression", got "nothing"');
    assert.match(await compileError('* | eval("x = (a + ")'), /^Query error: eval\(\): invalid expression "\(a \+": /);
  });
});

describe('hash', () => {
  test('CityHash64 as upper-case hex with leading zero bytes dropped', async () => {
    const r = await rows('* | hash(user)', ['hash_key']);
    assert.deepEqual(col(r, 'hash_key'), EVENTS.map((e) => expectedHash(e.user)));
    // user138 hashes to 0x007699836BC9DECB: its leading zero byte is dropped.
    assert.equal(r.results[2].hash_key, '7699836BC9DECB');
    // The hash of the empty string is CityHash's constant k2.
    assert.deepEqual(col(await run('* | hash(missing)'), 'hash_key'), Array(4).fill('9AE16A3B2F90404F'));
  });

  test('* | hash(user, email, as=composite_key): several values combined; field= anywhere; timestamp as text', async () => {
    const r = await rows('* | hash(user, email, as=composite_key)', ['composite_key']);
    assert.deepEqual(col(r, 'composite_key'), EVENTS.map((e) => expectedHash(e.user, e.email)));
    const f = await run('* | hash(field=user, field=email, as=composite_key)');
    assert.deepEqual(col(f, 'composite_key'), col(r, 'composite_key'));
    const t = await run('* | hash(timestamp)');
    assert.deepEqual(col(t, 'hash_key'), TIMES.map((x) => expectedHash(x.replace('T', ' ').replace('Z', ''))));
  });
});

describe('strftime and now', () => {
  const utc = (iso: string) => iso.slice(0, 19).replace('T', ' ');

  test('formats the event time; %M is the minute', async () => {
    const r = await rows('* | strftime("%Y-%m-%d %H:%M:%S")', ['_time']);
    assert.deepEqual(col(r, '_time'), TIMES.map(utc));
    const h = await run('* | strftime("%H", as=_hour) | groupBy(_hour)');
    assert.equal(h.results.reduce((n, x) => n + x._count, 0), 4);
    for (const row of h.results) assert.match(row._hour, /^\d{2}$/);
  });

  test('other fields are parsed leniently: epoch ms/ns, date-time text; unparseable is empty', async () => {
    const r = await run('* | strftime("%Y-%m-%d %H:%M:%S", field=when, as=w)');
    assert.deepEqual(col(r, 'w'), ['2026-01-05 13:04:09', '2026-01-05 13:04:09', '2026-01-05 13:04:09', '']);
  });

  test('names, %R, %e, a literal %, and the timezone', async () => {
    const r = await run('* | strftime("%a %A %b %B %R %e 100%%", field=when, timezone="Asia/Kolkata") | user=Admin');
    assert.equal(r.results[0]._time, 'Mon Monday Jan January 18:34  5 100%');
  });

  test('errors', async () => {
    assert.equal(await compileError('* | strftime()'), 'Query error: strftime() requires a format string');
    assert.equal(await compileError('* | strftime("%H", timezone="Mars/Olympus")'), 'Query error: strftime(): unknown timezone "Mars/Olympus"');
  });

  test('now() is the current time on every row', async () => {
    const before = Date.now();
    const r = await rows('* | now(snapshot_time)', ['snapshot_time']);
    for (const v of col(r, 'snapshot_time')) {
      assert.match(v, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      assert.ok(Math.abs(Date.parse(`${v.replace(' ', 'T')}Z`) - before) < 60_000);
    }
    assert.deepEqual((await run('* | now()')).field_order, ['_now', ...EVENT_TAIL]);
  });
});

describe('all together', () => {
  test('field_order: computed columns in command order, arithmetic assignments last', async () => {
    const r = await run('* | len(name) | x := bytes * 2 | uppercase(user) | hash(user)');
    assert.deepEqual(r.field_order, ['_len', 'user', 'hash_key', ...EVENT_TAIL, 'x']);
    assert.equal(r.results[0].hash_key, expectedHash('ADMIN'));
  });

  test('unknown named arguments are refused', async () => {
    assert.equal(await compileError('* | len(user, foo=1)'), 'Query error: len(): unknown argument "foo" (supported: field=, as=)');
    assert.match(await compileError('* | split(email, "@", 1, as=x)'), /^Query error: split\(\): unknown argument "as"/);
  });

  test('values crafted to break SQL stay values', async () => {
    const r = await run(String.raw`* | replace("'\\)", "\\\\0 '); --", quote, q) | sprintf("'; DROP TABLE logs; -- %s", user) | split(quote, "'", 1) | head(4)`);
    const first = r.results.find((x) => x.quote !== undefined)!;
    assert.equal(first.quote, QUOTE);
    assert.equal(first.q, `it's "q" \\ x\\0 '); --; DROP TABLE logs; --`);
    assert.equal(first._sprintf, "'; DROP TABLE logs; -- Admin");
    assert.equal(first._split, 'it');
    assert.equal((await run('*')).count, 4);
  });

  test('the reference lists each command with its tier and an example', async () => {
    const ref = (await data.admin.get('/api/v1/query/reference')).body.data;
    const names = ['replace', 'concat', 'lowercase', 'uppercase', 'len', 'logSize', 'levenshtein', 'base64Decode', 'split', 'substr', 'urldecode', 'coalesce', 'sprintf', 'eval', 'hash', 'strftime', 'now'];
    for (const n of names) {
      const c = ref.commands.find((x: { name: string }) => x.name === n);
      assert.ok(c, n);
      assert.equal(c.tier, 'STANDARD');
      assert.ok(c.signature.startsWith(`${n}(`), n);
      const v = await data.admin.post('/api/v1/query/validate', { query: c.example, fractal_id: data.fractal });
      assert.equal(v.body.valid ?? v.body.data?.valid, true, `${n}: ${c.example} ${JSON.stringify(v.body)}`);
    }
  });
});
