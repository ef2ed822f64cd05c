// Shipper snippets of the admin tokens page (renderer/src/lib/snippets.ts): each points at the
// appliance's address with the real token, and the parts the appliance reads are checked against the
// service's own code (its kv/syslog parsers, and how it reads Filebeat's and Logstash's credentials).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allSnippets,
  curlSnippet,
  filebeatSnippet,
  fluentBitSnippet,
  logstashSnippet,
  networkGearSnippet,
  otelSnippet,
  parseTarget,
  rsyslogForwardSnippet,
  rsyslogSnippet,
  SAMPLE_RECORD,
  syslogNgBulkSnippet,
  syslogNgSnippet,
  vectorSnippet,
  type Target,
} from '../../renderer/src/lib/snippets.ts';
import { parseKv } from '../../service/src/ingest/parsers/kv.ts';
import { parseSyslog } from '../../service/src/ingest/parsers/syslog.ts';
import { presentedCredential } from '../../service/src/auth/access.ts';

const TOKEN = 'svc_ingest_0123456789abcdef0123456789abcdef';
const LAN = parseTarget('10.0.0.5:8080')!;
const TLS = parseTarget('https://logs.example.lan')!;
const PARSERS = ['json', 'kv', 'syslog'] as const;

/** What the service makes of an Authorization header value. */
const credentialOf = (authorization: string) => presentedCredential({ headers: { authorization } } as never);

test('the appliance address: scheme optional, default ports, nothing else accepted', () => {
  assert.deepEqual(LAN, { base: 'http://10.0.0.5:8080', host: '10.0.0.5', port: 8080, tls: false });
  assert.deepEqual(TLS, { base: 'https://logs.example.lan', host: 'logs.example.lan', port: 443, tls: true });
  assert.deepEqual(parseTarget('http://appliance/'), { base: 'http://appliance', host: 'appliance', port: 80, tls: false });
  assert.equal(parseTarget('http://[::1]:8080')?.host, '::1');
  assert.equal(parseTarget('  '), null);
  assert.equal(parseTarget('ftp://files'), null);
  assert.equal(parseTarget('http://'), null);
});

test('every snippet carries the real token and this appliance, for every parser', () => {
  for (const parser of PARSERS) {
    for (const target of [LAN, TLS] as Target[]) {
      const all = allSnippets(target, TOKEN, parser);
      assert.deepEqual(
        all.map((s) => s.id),
        ['curl', 'vector', 'fluent-bit', 'otel', 'filebeat', 'logstash', 'rsyslog', 'rsyslog-omfwd', 'syslog-ng', 'syslog-ng-bulk', 'network-gear'],
      );
      for (const s of all) {
        // omfwd and network gear send to a syslog listener, which maps to the token.
        if (s.id !== 'rsyslog-omfwd' && s.id !== 'network-gear') assert.ok(s.text.includes(TOKEN), `${s.id} (${parser}) has the token`);
        assert.ok(s.text.includes(target.host), `${s.id} (${parser}) points at ${target.host}`);
        assert.ok(s.note.length > 20, `${s.id} explains itself`);
        assert.ok(!/undefined|null|\[object/.test(s.text), `${s.id} (${parser}) has no placeholder leak`);
      }
    }
  }
});

test('curl: the sample record of each parser is one the appliance accepts', () => {
  const json = curlSnippet(LAN, TOKEN, 'json').text;
  assert.match(json, /curl -sS -X POST 'http:\/\/10\.0\.0\.5:8080\/api\/v1\/ingest'/);
  assert.match(json, /-H 'Authorization: Bearer svc_ingest_0123456789abcdef0123456789abcdef'/);
  assert.match(json, /Content-Type: application\/json/);
  const body = (text: string) => /--data-binary '(.*)'$/m.exec(text)![1]!;
  assert.deepEqual(JSON.parse(body(json)), JSON.parse(SAMPLE_RECORD.json));

  const kv = curlSnippet(LAN, TOKEN, 'kv').text;
  assert.match(kv, /Content-Type: text\/plain/);
  assert.deepEqual(parseKv(body(kv)), { level: 'info', user: 'alice', action: 'login', msg: 'hello from curl' });

  const syslog = parseSyslog(body(curlSnippet(LAN, TOKEN, 'syslog').text));
  assert.equal(syslog.message, 'hello from curl');
  assert.equal(syslog.hostname, 'web01');
  assert.equal(syslog.timestamp, undefined, 'nil timestamp: stamped on arrival');
});

test('Vector: http sink, raw lines with a bearer token; syslog over a socket source', () => {
  const v = vectorSnippet(LAN, TOKEN, 'kv').text;
  assert.match(v, /^type = "http"$/m);
  assert.match(v, /^uri = "http:\/\/10\.0\.0\.5:8080\/api\/v1\/ingest"$/m);
  assert.match(v, /^encoding\.codec = "text"$/m);
  assert.match(v, /^framing\.method = "newline_delimited"$/m);
  assert.match(v, /^auth\.strategy = "bearer"$/m);
  assert.match(v, new RegExp(`^auth\\.token = "${TOKEN}"$`, 'm'));
  assert.match(v, /^inputs = \["app_logs"\]$/m);
  const s = vectorSnippet(LAN, TOKEN, 'syslog').text;
  assert.match(s, /^\[sources\.syslog_in\]\ntype = "socket"\nmode = "udp"/m);
  assert.match(s, /^inputs = \["syslog_in"\]$/m);
});

test('Fluent Bit: http output with host, port, URI, header and TLS from the address', () => {
  const f = fluentBitSnippet(LAN, TOKEN, 'json').text;
  assert.match(f, /^ {4}Name +http$/m);
  assert.match(f, /^ {4}Host +10\.0\.0\.5$/m);
  assert.match(f, /^ {4}Port +8080$/m);
  assert.match(f, /^ {4}URI +\/api\/v1\/ingest$/m);
  assert.match(f, /^ {4}Format +json_lines$/m);
  assert.match(f, new RegExp(`^ {4}Header +Authorization Bearer ${TOKEN}$`, 'm'));
  assert.match(f, /^ {4}tls +off$/m);
  assert.match(fluentBitSnippet(TLS, TOKEN, 'json').text, /^ {4}Port +443$\n(.*\n)*^ {4}tls +on$/m);
  assert.match(fluentBitSnippet(LAN, TOKEN, 'kv').text, /^ {4}Parser +logfmt$/m);
  assert.match(fluentBitSnippet(LAN, TOKEN, 'syslog').text, /^ {4}Name +syslog$/m);
});

test('OpenTelemetry Collector: otlphttp exporter at the base address (it appends /v1/logs)', () => {
  const o = otelSnippet(LAN, TOKEN, 'json').text;
  assert.match(o, /^ {2}otlphttp\/log_appliance:$/m);
  assert.match(o, /^ {4}endpoint: http:\/\/10\.0\.0\.5:8080 /m);
  assert.ok(!/endpoint: \S*\/v1\/logs/.test(o), 'no signal path in the endpoint');
  assert.match(o, new RegExp(`^ {6}Authorization: "Bearer ${TOKEN}"$`, 'm'));
  assert.match(o, /^ {6}exporters: \[otlphttp\/log_appliance\]$/m);
  assert.match(otelSnippet(LAN, TOKEN, 'syslog').text, /^ {6}receivers: \[otlp, syslog\]$/m);
});

test('Filebeat and Logstash: the credential they send is read back as the token', () => {
  const fb = filebeatSnippet(LAN, TOKEN, 'json').text;
  assert.match(fb, /^ {2}hosts: \["http:\/\/10\.0\.0\.5:8080"\]$/m);
  const apiKey = /api_key: "(.*)"/.exec(fb)![1]!;
  // Filebeat sends `ApiKey base64(id:key)`.
  assert.equal(credentialOf(`ApiKey ${Buffer.from(apiKey).toString('base64')}`), TOKEN);

  const ls = logstashSnippet(LAN, TOKEN, 'kv').text;
  assert.match(ls, /hosts => \["http:\/\/10\.0\.0\.5:8080"\]/);
  assert.match(ls, /kv \{ source => "message" \}/);
  const user = /user => "(.*)"/.exec(ls)![1]!;
  const password = /password => "(.*)"/.exec(ls)![1]!;
  // Logstash sends basic authentication.
  assert.equal(credentialOf(`Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`), TOKEN);
});

test('rsyslog and syslog-ng: Debian\'s builds (omelasticsearch, omfwd to a listener, http() with batching, elasticsearch-http()), lossless settings; run for real in tests/shippers/', () => {
  const r = rsyslogSnippet(LAN, TOKEN).text;
  assert.ok(!r.includes('omhttp'), 'Debian\'s rsyslog has no omhttp');
  assert.match(r, /module\(load="omelasticsearch"\)/);
  assert.match(r, /server="10\.0\.0\.5" serverport="8080" usehttps="off"/);
  assert.match(r, /retryfailures="on" retryruleset="log_appliance"/);
  assert.match(r, /action\.resumeRetryCount="-1"/);
  assert.match(r, /bulkmode="on"/);
  const uid = /uid="(.*?)"/.exec(r)![1]!;
  const pwd = /pwd="(.*?)"/.exec(r)![1]!;
  assert.equal(credentialOf(`Basic ${Buffer.from(`${uid}:${pwd}`).toString('base64')}`), TOKEN);
  assert.match(rsyslogSnippet(TLS, TOKEN).text, /serverport="443" usehttps="on"/);

  const f = rsyslogForwardSnippet(LAN, TOKEN).text;
  assert.match(f, /type="omfwd"/);
  assert.match(f, /target="10\.0\.0\.5" port="5514" protocol="tcp"/);
  assert.match(f, /TCP_Framing="octet-counted"/);
  const udp = rsyslogForwardSnippet(LAN, TOKEN, { port: 514, protocol: 'udp' }).text;
  assert.match(udp, /port="514" protocol="udp"/);
  assert.ok(!udp.includes('TCP_Framing'));

  const n = syslogNgSnippet(LAN, TOKEN).text;
  assert.match(n, /url\("http:\/\/10\.0\.0\.5:8080\/api\/v1\/ingest"\)/);
  assert.match(n, new RegExp(`headers\\("Authorization: Bearer ${TOKEN}"`));
  assert.match(n, /batch-lines\(100\)/);
  assert.match(n, /time-reopen\(1\)/);
  assert.match(n, /flags\(flow-control\)/);
  const b = syslogNgBulkSnippet(LAN, TOKEN).text;
  assert.match(b, /elasticsearch-http\(/);
  assert.match(b, /url\("http:\/\/10\.0\.0\.5:8080\/_bulk"\)/);
  assert.equal(credentialOf(`Basic ${Buffer.from(`${/user\("(.*?)"\)/.exec(b)![1]}:${/password\("(.*?)"\)/.exec(b)![1]}`).toString('base64')}`), TOKEN);
  // Both send the syslog parser's field names with the message's own time.
  for (const text of [n, b]) assert.match(text, /format-json timestamp=\$\{ISODATE\} hostname=\$\{HOST\} app_name=\$\{PROGRAM\}/);
});

test('lossless settings: Fluent Bit retries without limit, Vector blocks, the Collector queues and retries until taken; network gear points at a listener', () => {
  assert.match(fluentBitSnippet(LAN, TOKEN, 'json').text, /Retry_Limit\s+no_limits/);
  assert.match(vectorSnippet(LAN, TOKEN, 'json').text, /^buffer\.when_full = "block"$/m);
  const o = otelSnippet(LAN, TOKEN, 'json').text;
  assert.match(o, /retry_on_failure:\n\s+enabled: true\n\s+max_elapsed_time: 0/);
  assert.match(o, /sending_queue:\n\s+enabled: true/);
  assert.match(filebeatSnippet(LAN, TOKEN, 'json').text, /backoff\.max: 60s/);
  const g = networkGearSnippet(LAN, TOKEN).text;
  assert.match(g, /^logging host 10\.0\.0\.5 transport udp port 5514$/m);
  assert.match(g, /^set system syslog host 10\.0\.0\.5 port 5514 any info$/m);
  assert.match(networkGearSnippet(LAN, TOKEN, { port: 6514, protocol: 'tcp' }).text, /set mode reliable/);
});
