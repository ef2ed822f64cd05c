// The kv and syslog parsers: tables of lines → fields, and the ParseError sentences for bad lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseKv } from '../../service/src/ingest/parsers/kv.ts';
import { parseSyslog, parseSyslogAt } from '../../service/src/ingest/parsers/syslog.ts';
import { ParseError } from '../../service/src/ingest/parsers/parse-error.ts';

/** Asserts that fn throws a ParseError whose message matches `message`. */
function throwsParse(fn: () => unknown, message: RegExp | string, label: string): void {
  assert.throws(
    fn,
    (e: unknown) => {
      assert.ok(e instanceof ParseError, `${label}: expected a ParseError, got ${String(e)}`);
      if (typeof message === 'string') assert.equal(e.message, message, label);
      else assert.match(e.message, message, label);
      return true;
    },
    label,
  );
}

// ---------------------------------------------------------------------------------------------
// kv

test('kv: pairs, quoting and escapes', () => {
  const cases: Array<[string, Record<string, string>]> = [
    [`a=1 b="two words" c='x y' d=`, { a: '1', b: 'two words', c: 'x y', d: '' }],
    [`a=1`, { a: '1' }],
    [`a="" b=''`, { a: '', b: '' }],
    [`m="say \\"hi\\"" p='it\\'s' b="back\\\\slash"`, { m: 'say "hi"', p: "it's", b: 'back\\slash' }],
    [`nl="a\\nb" tab="a\\tb"`, { nl: 'a\nb', tab: 'a\tb' }],
    [`s='a\\nb\\tc'`, { s: 'a\nb\tc' }],
    [`path="C:\\data\\x"`, { path: 'C:\\data\\x' }], // unknown escapes stay as written
    [`q="it's" r='say "hi"'`, { q: "it's", r: 'say "hi"' }], // the other quote is plain text
    [`e="ends in backslash\\\\"`, { e: 'ends in backslash\\' }],
    [`a="x = y" b=c=d`, { a: 'x = y', b: 'c=d' }], // '=' inside values
    [`a="x"y b=2`, { a: 'x', b: '2' }], // text glued after a closing quote is its own token
    [`a=x"y z"`, { a: 'x"y' }], // a quote inside an unquoted value is plain text
    [`名前=値 emoji="🙂 ok"`, { 名前: '値', emoji: '🙂 ok' }],
    [`user.name=bob http[status]=200 @t=1`, { 'user.name': 'bob', 'http[status]': '200', '@t': '1' }],
    [`status=200 ratio=0.5 big=12345678901234567890 neg=-1`, { status: '200', ratio: '0.5', big: '12345678901234567890', neg: '-1' }], // values stay strings
    [`multi="line one\nline two"`, { multi: 'line one\nline two' }], // a raw newline inside quotes
  ];
  for (const [line, want] of cases) {
    assert.deepEqual(parseKv(line), want, line);
  }
});

test('kv: separators, white space, ignored tokens and duplicates', () => {
  const cases: Array<[string, Record<string, string>]> = [
    [`a=1, b=2`, { a: '1', b: '2' }],
    [`a=1,b=2`, { a: '1', b: '2' }],
    [`a=1;b=2; c=3;`, { a: '1', b: '2', c: '3' }],
    [`a=1 , b=2 ;c=3`, { a: '1', b: '2', c: '3' }],
    [`a="x, y", b='z;w'; c=3`, { a: 'x, y', b: 'z;w', c: '3' }],
    [`list=a,b,c x=1`, { list: 'a,b,c', x: '1' }], // a comma not followed by key= is part of the value
    [`msg=hello;world`, { msg: 'hello;world' }],
    [`a=x,`, { a: 'x' }],
    [`a=1,,b=2`, { a: '1', b: '2' }],
    [`a=,b=2`, { a: '', b: '2' }],
    [`a=1\tb=2\r\n`, { a: '1', b: '2' }],
    [`   a=1    b=2   `, { a: '1', b: '2' }],
    [`GET /index.html status=200 ok`, { status: '200' }], // tokens without '=' are ignored
    [`=x a=1 =`, { a: '1' }], // so are values without a key
    [`="quoted, no key" a=1`, { a: '1' }],
    [`a=1 a=2 b=3 a="last"`, { a: 'last', b: '3' }], // last one wins
  ];
  for (const [line, want] of cases) {
    assert.deepEqual(parseKv(line), want, line);
  }
});

test('kv: a key named __proto__ is an ordinary field', () => {
  const r = parseKv('__proto__=x constructor=y');
  assert.equal(Object.getPrototypeOf(r), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(r, '__proto__')?.value, 'x');
  assert.equal(r.constructor, 'y');
  assert.deepEqual(Object.keys(r), ['__proto__', 'constructor']);
});

test('kv: bad lines throw ParseError naming the problem', () => {
  for (const line of ['', '   ', 'hello world', '=1', '= =', 'just text, no pairs;']) {
    throwsParse(() => parseKv(line), 'no key=value pairs found', JSON.stringify(line));
  }
  throwsParse(() => parseKv('a="unterminated'), /unterminated double quote .*key "a"/, 'double');
  throwsParse(() => parseKv(`a=1 b='x y`), /unterminated single quote .*key "b"/, 'single');
  throwsParse(() => parseKv(`a=1 msg="ends in escape\\"`), /unterminated .*key "msg"/, 'escaped closing quote');
  throwsParse(() => parseKv(`a=1 msg="ends in backslash\\`), /unterminated .*key "msg"/, 'trailing backslash');
  throwsParse(() => parseKv(`a=1 b="x' c=2`), /key "b"/, 'mismatched quotes');
});

/**
 * The CPU time `work` takes in this process (ms): unlike the time on the clock, it does not grow when
 * other processes keep the machine busy. A quadratic scan of these lines takes seconds; a linear one, milliseconds.
 */
function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

test('kv: scanning stays linear on hostile lines', () => {
  const lines = [
    'a=' + ','.repeat(200_000),
    'a=' + 'x,'.repeat(100_000),
    'a=' + 'x;y'.repeat(70_000),
    'k'.repeat(200_000) + '=v',
    'a="' + '\\"'.repeat(100_000) + '"',
    'a=1 ' + 'word '.repeat(40_000),
  ];
  const ms = cpuMs(() => lines.forEach((line) => parseKv(line)));
  assert.ok(ms < 1000, `took ${ms.toFixed(0)} ms of CPU`);
  assert.equal(parseKv('a="' + '\\"'.repeat(1000) + '"').a, '"'.repeat(1000));
});

// ---------------------------------------------------------------------------------------------
// syslog

const NOW = Date.UTC(2026, 5, 15, 12, 0, 0); // 2026-06-15T12:00:00Z

test('syslog RFC 5424: header, nil values, message', () => {
  const cases: Array<[string, Record<string, string | number>]> = [
    [
      `<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed for lonvick on /dev/pts/8`,
      {
        priority: 34, facility: 4, severity: 2, facility_name: 'auth', severity_name: 'crit', version: 1,
        timestamp: '2003-10-11T22:14:15.003Z', hostname: 'mymachine.example.com', app_name: 'su', msg_id: 'ID47',
        message: "'su root' failed for lonvick on /dev/pts/8",
      },
    ],
    [
      `<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.`,
      {
        priority: 165, facility: 20, severity: 5, facility_name: 'local4', severity_name: 'notice', version: 1,
        timestamp: '2003-08-24T05:14:15.000003-07:00', hostname: '192.0.2.1', app_name: 'myproc', proc_id: '8710',
        message: "%% It's time to make the do-nuts.",
      },
    ],
    [
      `<0>1 - - - - - -`,
      { priority: 0, facility: 0, severity: 0, facility_name: 'kern', severity_name: 'emerg', version: 1 },
    ],
    [
      `<191>2 2026-01-02T03:04:05Z h a p m -  two leading spaces, one is the separator  \r\n`,
      {
        priority: 191, facility: 23, severity: 7, facility_name: 'local7', severity_name: 'debug', version: 2,
        timestamp: '2026-01-02T03:04:05Z', hostname: 'h', app_name: 'a', proc_id: 'p', msg_id: 'm',
        message: ' two leading spaces, one is the separator  ',
      },
    ],
    [
      `<13>1 2026-01-02T03:04:05Z host app 1 - - \uFEFFwith BOM`,
      {
        priority: 13, facility: 1, severity: 5, facility_name: 'user', severity_name: 'notice', version: 1,
        timestamp: '2026-01-02T03:04:05Z', hostname: 'host', app_name: 'app', proc_id: '1', message: 'with BOM',
      },
    ],
    [
      // A sender that leaves out the SD field: the rest is the message.
      `<13>1 2026-01-02T03:04:05Z host app - -  no sd here`,
      {
        priority: 13, facility: 1, severity: 5, facility_name: 'user', severity_name: 'notice', version: 1,
        timestamp: '2026-01-02T03:04:05Z', hostname: 'host', app_name: 'app', message: 'no sd here',
      },
    ],
    [
      `<13>1 not-a-time host app - -`,
      {
        priority: 13, facility: 1, severity: 5, facility_name: 'user', severity_name: 'notice', version: 1,
        timestamp: 'not-a-time', hostname: 'host', app_name: 'app',
      },
    ],
  ];
  for (const [line, want] of cases) {
    assert.deepEqual(parseSyslogAt(line, NOW), want, line);
  }
});

test('syslog RFC 5424: structured data', () => {
  const pri = { priority: 165, facility: 20, severity: 5, facility_name: 'local4', severity_name: 'notice', version: 1 };
  const head = `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47`;
  const hf = { timestamp: '2003-10-11T22:14:15.003Z', hostname: 'mymachine.example.com', app_name: 'evntslog', msg_id: 'ID47' };
  const cases: Array<[string, Record<string, string | number>]> = [
    [
      `${head} [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] \uFEFFAn application event log entry...`,
      {
        ...pri, ...hf,
        'sd.exampleSDID@32473.iut': '3', 'sd.exampleSDID@32473.eventSource': 'Application',
        'sd.exampleSDID@32473.eventID': '1011', message: 'An application event log entry...',
      },
    ],
    [
      `${head} [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]`,
      {
        ...pri, ...hf,
        'sd.exampleSDID@32473.iut': '3', 'sd.exampleSDID@32473.eventSource': 'Application',
        'sd.exampleSDID@32473.eventID': '1011', 'sd.examplePriority@32473.class': 'high',
      },
    ],
    [
      `${head} [x@1 q="say \\"hi\\"" b="back\\\\slash" c="br\\]acket" d="keep\\n" e="a ] b" f=""] m`,
      {
        ...pri, ...hf,
        'sd.x@1.q': 'say "hi"', 'sd.x@1.b': 'back\\slash', 'sd.x@1.c': 'br]acket', 'sd.x@1.d': 'keep\\n',
        'sd.x@1.e': 'a ] b', 'sd.x@1.f': '', message: 'm',
      },
    ],
    [`${head} [origin] [meta  k="1"   k="2" ]x`, { ...pri, ...hf, message: '[meta  k="1"   k="2" ]x' }],
    [`${head} [origin][meta  k="1"   k="2" ] x`, { ...pri, ...hf, 'sd.meta.k': '2', message: 'x' }],
  ];
  for (const [line, want] of cases) {
    assert.deepEqual(parseSyslogAt(line, NOW), want, line);
  }
});

test('syslog: every facility and severity name', () => {
  const facilities = [
    'kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv', 'ftp',
    'ntp', 'security', 'console', 'solaris-cron', 'local0', 'local1', 'local2', 'local3', 'local4', 'local5',
    'local6', 'local7',
  ];
  const severities = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'];
  for (let f = 0; f < 24; f++) {
    for (let s = 0; s < 8; s++) {
      const pri = f * 8 + s;
      const r = parseSyslogAt(`<${pri}>1 - - - - - - m`, NOW);
      assert.deepEqual(
        [r.priority, r.facility, r.severity, r.facility_name, r.severity_name],
        [pri, f, s, facilities[f], severities[s]],
        `<${pri}>`,
      );
      const b = parseSyslogAt(`<${pri}>Jan  2 03:04:05 h a: m`, NOW);
      assert.equal(b.facility_name, facilities[f]);
      assert.equal(b.severity_name, severities[s]);
    }
  }
});

test('syslog RFC 3164: timestamps, hostname, tag', () => {
  const p13 = { priority: 13, facility: 1, severity: 5, facility_name: 'user', severity_name: 'notice' };
  const p34 = { priority: 34, facility: 4, severity: 2, facility_name: 'auth', severity_name: 'crit' };
  const cases: Array<[string, Record<string, string | number>]> = [
    [
      // October is more than a day ahead of 2026-06-15: the previous year.
      `<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8`,
      { ...p34, timestamp: '2025-10-11T22:14:15Z', hostname: 'mymachine', app_name: 'su', message: "'su root' failed for lonvick on /dev/pts/8" },
    ],
    [
      `<13>Jan  2 03:04:05 host sshd[1234]: Accepted publickey for bob`,
      { ...p13, timestamp: '2026-01-02T03:04:05Z', hostname: 'host', app_name: 'sshd', proc_id: '1234', message: 'Accepted publickey for bob' },
    ],
    [
      `Jan 02 03:04:05 host sshd[1234]: no PRI`,
      { timestamp: '2026-01-02T03:04:05Z', hostname: 'host', app_name: 'sshd', proc_id: '1234', message: 'no PRI' },
    ],
    [
      `Jun 16 11:00:00 host app: 23 hours ahead is still this year`,
      { timestamp: '2026-06-16T11:00:00Z', hostname: 'host', app_name: 'app', message: '23 hours ahead is still this year' },
    ],
    [
      `Jun 16 13:00:00 host app: 25 hours ahead is last year`,
      { timestamp: '2025-06-16T13:00:00Z', hostname: 'host', app_name: 'app', message: '25 hours ahead is last year' },
    ],
    [
      `<13>Jan  2 03:04:05.123 host app: fraction`,
      { ...p13, timestamp: '2026-01-02T03:04:05.123Z', hostname: 'host', app_name: 'app', message: 'fraction' },
    ],
    [
      `<13>Jan  2 2024 03:04:05 host app: year before the time`,
      { ...p13, timestamp: '2024-01-02T03:04:05Z', hostname: 'host', app_name: 'app', message: 'year before the time' },
    ],
    [
      `<13>Jan  2 03:04:05 2024 host app: year after the time`,
      { ...p13, timestamp: '2024-01-02T03:04:05Z', hostname: 'host', app_name: 'app', message: 'year after the time' },
    ],
    [
      `2024 Feb 29 03:04:05 host app: year first`,
      { timestamp: '2024-02-29T03:04:05Z', hostname: 'host', app_name: 'app', message: 'year first' },
    ],
    [
      `<13>2026-01-02T03:04:05.123456+01:00 host app[9]: ISO kept as received`,
      { ...p13, timestamp: '2026-01-02T03:04:05.123456+01:00', hostname: 'host', app_name: 'app', proc_id: '9', message: 'ISO kept as received' },
    ],
    [
      `2026-01-02 03:04:05 host app: ISO with a space`,
      { timestamp: '2026-01-02 03:04:05', hostname: 'host', app_name: 'app', message: 'ISO with a space' },
    ],
    [
      `<13>Jan  2 03:04:05 sshd[12]: no hostname`,
      { ...p13, timestamp: '2026-01-02T03:04:05Z', app_name: 'sshd', proc_id: '12', message: 'no hostname' },
    ],
    [
      `<13>Jan  2 03:04:05 host just a message`,
      { ...p13, timestamp: '2026-01-02T03:04:05Z', hostname: 'host', message: 'just a message' },
    ],
    [
      `<13>Jan  2 03:04:05 host postfix/smtpd[123]: a: b: c`,
      { ...p13, timestamp: '2026-01-02T03:04:05Z', hostname: 'host', app_name: 'postfix/smtpd', proc_id: '123', message: 'a: b: c' },
    ],
    [
      `<13>Jan  2 03:04:05 host my-app[77] no colon`,
      { ...p13, timestamp: '2026-01-02T03:04:05Z', hostname: 'host', app_name: 'my-app', proc_id: '77', message: 'no colon' },
    ],
    [
      `Jan  2 03:04:05 fe80::1 kernel: [12.5] eth0 up`,
      { timestamp: '2026-01-02T03:04:05Z', hostname: 'fe80::1', app_name: 'kernel', message: '[12.5] eth0 up' },
    ],
    [
      `Jan  2 03:04:05 host app:`,
      { timestamp: '2026-01-02T03:04:05Z', hostname: 'host', app_name: 'app' },
    ],
    [
      `<13>myapp[5]: PRI without a timestamp`,
      { ...p13, app_name: 'myapp', proc_id: '5', message: 'PRI without a timestamp' },
    ],
    [`<13>plain words only`, { ...p13, message: 'plain words only' }],
    [`<13>`, { ...p13 }],
    [`<13>Foo  2 03:04:05 host x`, { ...p13, message: 'Foo  2 03:04:05 host x' }],
  ];
  for (const [line, want] of cases) {
    assert.deepEqual(parseSyslogAt(line, NOW), want, line);
  }
});

test('syslog RFC 3164: the year of a timestamp without one', () => {
  const at = (now: number, line: string) => parseSyslogAt(line + ' h a: m', now).timestamp;
  const newYear = Date.UTC(2026, 0, 1, 0, 30); // 2026-01-01T00:30Z
  assert.equal(at(newYear, 'Dec 31 23:59:00'), '2025-12-31T23:59:00Z');
  assert.equal(at(newYear, 'Jan  1 00:40:00'), '2026-01-01T00:40:00Z');
  assert.equal(at(newYear, 'Jan  2 00:20:00'), '2026-01-02T00:20:00Z'); // 23h50m ahead
  assert.equal(at(newYear, 'Jan  2 00:40:00'), '2025-01-02T00:40:00Z'); // 24h10m ahead
  // Feb 29 only exists in a leap year: 2025 has none, so 2024.
  assert.equal(at(Date.UTC(2025, 2, 10), 'Feb 29 10:00:00'), '2024-02-29T10:00:00Z');
  assert.equal(at(Date.UTC(2024, 2, 10), 'Feb 29 10:00:00'), '2024-02-29T10:00:00Z');
  // The clock is read when no time is given.
  const thisYear = new Date().getUTCFullYear();
  const ts = String(parseSyslog('Jan  1 00:00:00 h a: m').timestamp);
  assert.equal(ts, `${thisYear}-01-01T00:00:00Z`);
  // Used as a callback, the index is not taken for a clock.
  const mapped = ['Jan  1 00:00:00 h a: m', 'Jan  1 00:00:00 h a: m'].map(parseSyslog);
  assert.deepEqual(mapped.map((r) => r.timestamp), [`${thisYear}-01-01T00:00:00Z`, `${thisYear}-01-01T00:00:00Z`]);
});

test('syslog: bad lines throw ParseError naming the problem', () => {
  const notSyslog = 'not a syslog line (RFC 5424 or RFC 3164)';
  for (const line of [
    '',
    'hello world',
    '{"json": true}',
    'a=1 b=2',
    'Foo 12 03:04:05 host x',
    'Jan 32 03:04:05 host x',
    'Jan  0 03:04:05 host x',
    'Jan  2 25:04:05 host x',
    'Jan  2 03:04 host x',
    'Jan  2 03:04:05Z host x',
    'Feb 30 03:04:05 host x',
    '2023 Feb 29 03:04:05 host x',
    '2026-13-45 host app: x',
  ]) {
    throwsParse(() => parseSyslogAt(line, NOW), notSyslog, JSON.stringify(line));
  }
  // Feb 29 when neither this year (2026) nor the last (2025) has one.
  throwsParse(() => parseSyslogAt('Feb 29 10:00:00 h a: m', Date.UTC(2026, 2, 1)), notSyslog, 'Feb 29');

  for (const line of ['<192>1 - - - - - -', '<999>Jan  2 03:04:05 h a: m', '<abc>x', '<>x', '<1234>x', '<13 x']) {
    throwsParse(() => parseSyslogAt(line, NOW), /invalid syslog priority .*expected <0> to <191>/, line);
  }
  throwsParse(() => parseSyslogAt('<13>1 2026-01-02T03:04:05Z host', NOW), 'RFC 5424 header is incomplete: APP-NAME is missing', 'short');
  throwsParse(() => parseSyslogAt('<13>1 ', NOW), 'RFC 5424 header is incomplete: TIMESTAMP is missing', 'empty');
  throwsParse(() => parseSyslogAt('<13>1 - h a p m [id k=v] x', NOW), /malformed structured data: in element \[id\], expected name="value"/, 'unquoted');
  throwsParse(() => parseSyslogAt('<13>1 - h a p m [id k="v x', NOW), /malformed structured data: the value of id k has no closing quote/, 'open value');
  throwsParse(() => parseSyslogAt('<13>1 - h a p m [id k="v"', NOW), /malformed structured data: element \[id\] is not closed/, 'open element');
  throwsParse(() => parseSyslogAt('<13>1 - h a p m [ k="v"]', NOW), /malformed structured data: an SD element has no SD-ID/, 'no id');
  throwsParse(() => parseSyslogAt('<13>1 - h a p m [id k="v\\"]', NOW), /closing quote/, 'escaped quote at the end');
});

test('syslog: scanning stays linear on hostile lines', () => {
  const lines = [
    '<13>1 - h a p m ' + '[x k="v"]'.repeat(30_000),
    '<13>1 - h a p m [x ' + 'k="\\"" '.repeat(30_000) + ']',
    '<13>Jan  2 03:04:05 ' + 'h'.repeat(200_000),
    '<13>Jan  2 03:04:05 h ' + 'a'.repeat(200_000) + '[' + '1'.repeat(200_000),
    '<13>' + ' '.repeat(200_000),
  ];
  const ms = cpuMs(() => lines.forEach((line) => parseSyslogAt(line, NOW)));
  assert.ok(ms < 1000, `took ${ms.toFixed(0)} ms of CPU`);
});
