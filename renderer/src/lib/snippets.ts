// Ready-to-paste shipper configurations for one ingest token (pure: unit-tested in tests/ui/snippets.test.ts).
//
// What the appliance accepts (service/src/ingest): POST /api/v1/ingest with a Bearer token, the body
// split into records by the token's parser (json: JSON values or NDJSON; kv and syslog: one record per
// line, a line starting with "{" is read as JSON); /_bulk in the Elasticsearch bulk format, where the
// token may also arrive as Basic password or `ApiKey base64(id:token)`; OTLP/HTTP at /v1/logs.
// Syslog forwarders post JSON over HTTP (rsyslog's omelasticsearch, syslog-ng's http()) or send to a
// syslog listener (rsyslog's omfwd). The rsyslog and syslog-ng recipes run in tests/shippers/ with
// Debian's own builds of both daemons.
//
// Each shipper either forwards raw lines (the token's parser reads them) or parses them itself and
// sends JSON (the token's parser is then bypassed, its normalizers still apply); the note says which.
import type { ParserType } from './admin-api.ts';

export interface Target {
  /** "http://10.0.0.5:8080", no trailing slash. */
  base: string;
  host: string;
  port: number;
  tls: boolean;
}

export interface ShipperSnippet {
  id: string;
  label: string;
  /** Where the text goes (file name or "shell"). */
  file: string;
  text: string;
  note: string;
}

/** Reads what a person typed as the appliance's address: "10.0.0.5:8080", "https://logs.lan". */
export function parseTarget(address: string): Target | null {
  let a = address.trim();
  if (!a) return null;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(a)) a = `http://${a}`;
  let u: URL;
  try {
    u = new URL(a);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (!u.hostname) return null;
  const tls = u.protocol === 'https:';
  const port = u.port ? Number(u.port) : tls ? 443 : 80;
  return { base: `${u.protocol}//${u.host}`, host: u.hostname.replace(/^\[|\]$/g, ''), port, tls };
}

export const SAMPLE_RECORD: Record<ParserType, string> = {
  json: '{"message":"hello from curl","level":"info","user":"alice"}',
  kv: 'level=info user=alice action=login msg="hello from curl"',
  // RFC 5424 with a nil timestamp: the appliance stamps it with the time it arrives.
  syslog: '<134>1 - web01 myapp - - - hello from curl',
};

const INGEST = '/api/v1/ingest';

export function curlSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const type = parser === 'json' ? 'application/json' : 'text/plain';
  return {
    id: 'curl',
    label: 'curl',
    file: 'shell',
    text: [
      `curl -sS -X POST '${t.base}${INGEST}' \\`,
      `  -H 'Authorization: Bearer ${token}' \\`,
      `  -H 'Content-Type: ${type}' \\`,
      `  --data-binary '${SAMPLE_RECORD[parser]}'`,
    ].join('\n'),
    note:
      parser === 'json'
        ? 'Sends one record. A JSON array or one object per line (NDJSON) sends many: --data-binary @events.ndjson.'
        : `Sends one ${parser} line; every line of the body is one record, so --data-binary @file.log sends a whole file.`,
  };
}

export function vectorSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const source =
    parser === 'syslog'
      ? ['[sources.syslog_in]', 'type = "socket"', 'mode = "udp"', 'address = "0.0.0.0:5514"   # point your syslog senders here']
      : ['[sources.app_logs]', 'type = "file"', `include = ["/var/log/myapp/*.${parser === 'json' ? 'json' : 'log'}"]`];
  const input = parser === 'syslog' ? 'syslog_in' : 'app_logs';
  return {
    id: 'vector',
    label: 'Vector',
    file: 'vector.toml',
    text: [
      ...source,
      '',
      '[sinks.log_appliance]',
      'type = "http"',
      `inputs = ["${input}"]`,
      `uri = "${t.base}${INGEST}"`,
      '# Raw lines, one per line: the appliance parses them with this token.',
      'encoding.codec = "text"',
      'framing.method = "newline_delimited"',
      'auth.strategy = "bearer"',
      `auth.token = "${token}"`,
      `healthcheck.uri = "${t.base}/api/v1/health"`,
      'batch.max_events = 1000',
      'batch.timeout_secs = 1',
      '# a full buffer holds the sources back instead of dropping; failed requests retry without end',
      'buffer.when_full = "block"',
    ].join('\n'),
    note: `Vector forwards each line as it is; the appliance parses it with this token's ${parser} parser.`,
  };
}

export function fluentBitSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const input =
    parser === 'syslog'
      ? ['[INPUT]', '    Name     syslog', '    Mode     udp', '    Listen   0.0.0.0', '    Port     5514', '    Parser   syslog-rfc3164']
      : [
          '[INPUT]',
          '    Name     tail',
          `    Path     /var/log/myapp/*.${parser === 'json' ? 'json' : 'log'}`,
          `    Parser   ${parser === 'json' ? 'json' : 'logfmt'}`,
        ];
  return {
    id: 'fluent-bit',
    label: 'Fluent Bit',
    file: 'fluent-bit.conf',
    text: [
      '[SERVICE]',
      '    Flush        5',
      '    # the stock parsers file: defines json, logfmt and syslog-rfc3164',
      '    Parsers_File parsers.conf',
      '',
      ...input,
      '',
      '[OUTPUT]',
      '    Name             http',
      '    Match            *',
      `    Host             ${t.host}`,
      `    Port             ${t.port}`,
      `    URI              ${INGEST}`,
      '    Format           json_lines',
      '    Json_date_key    @timestamp',
      '    Json_date_format iso8601',
      `    Header           Authorization Bearer ${token}`,
      `    tls              ${t.tls ? 'on' : 'off'}`,
      '    # the default is one retry: keep retrying while the appliance is busy (429) or away',
      '    Retry_Limit      no_limits',
    ].join('\n'),
    note:
      parser === 'json'
        ? 'Fluent Bit reads the JSON lines and sends them as JSON lines.'
        : `Fluent Bit parses the lines itself (${parser === 'kv' ? 'logfmt' : 'syslog-rfc3164'}) and sends JSON, which any token accepts; this token's ${parser} parser is not used for them, its normalizers are.`,
  };
}

export function otelSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const receiver =
    parser === 'syslog'
      ? ['  syslog:', '    udp:', '      listen_address: 0.0.0.0:5514', '    protocol: rfc3164']
      : [
          '  filelog:',
          `    include: [/var/log/myapp/*.${parser === 'json' ? 'json' : 'log'}]`,
          '    operators:',
          `      - type: ${parser === 'json' ? 'json_parser' : 'key_value_parser'}`,
        ];
  const name = parser === 'syslog' ? 'syslog' : 'filelog';
  return {
    id: 'otel',
    label: 'OpenTelemetry Collector',
    file: 'otelcol.yaml',
    text: [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      '        endpoint: 0.0.0.0:4318',
      `  # ${name} is in the contrib distribution (otelcol-contrib)`,
      ...receiver,
      '',
      'exporters:',
      '  otlphttp/log_appliance:',
      `    endpoint: ${t.base}   # the exporter appends /v1/logs`,
      '    headers:',
      `      Authorization: "Bearer ${token}"`,
      '    sending_queue:',
      '      enabled: true',
      '      queue_size: 5000',
      '    retry_on_failure:',
      '      enabled: true',
      '      max_elapsed_time: 0   # retry until the appliance takes it',
      '',
      'service:',
      '  pipelines:',
      '    logs:',
      `      receivers: [otlp, ${name}]`,
      '      exporters: [otlphttp/log_appliance]',
    ].join('\n'),
    note: 'OTLP records arrive structured (body as message, attributes as fields); the token picks the fractal and its normalizers apply, its parser does not.',
  };
}

export function filebeatSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const input =
    parser === 'syslog'
      ? ['  - type: udp', '    id: syslog-in', '    host: "0.0.0.0:5514"', '', 'processors:', '  - syslog:', '      field: message']
      : parser === 'json'
        ? [
            '  - type: filestream',
            '    id: myapp',
            '    paths:',
            '      - /var/log/myapp/*.json',
            '    parsers:',
            '      - ndjson:',
            '          target: ""',
            '          add_error_key: true',
          ]
        : ['  - type: filestream', '    id: myapp', '    paths:', '      - /var/log/myapp/*.log'];
  return {
    id: 'filebeat',
    label: 'Filebeat',
    file: 'filebeat.yml',
    text: [
      'filebeat.inputs:',
      ...input,
      '',
      'output.elasticsearch:',
      `  hosts: ["${t.base}"]`,
      '  # "id:key": the appliance reads the token after the colon',
      `  api_key: "filebeat:${token}"`,
      '  bulk_max_size: 1600',
      '  # items answered 429 are sent again; Filebeat retries until every event is acknowledged',
      '  backoff.init: 1s',
      '  backoff.max: 60s',
      '',
      '# nothing to install on the appliance',
      'setup.ilm.enabled: false',
      'setup.template.enabled: false',
    ].join('\n'),
    note:
      parser === 'kv'
        ? 'Filebeat sends each line as a JSON document with the text in "message"; the kv parser is not applied to /_bulk documents. For key=value lines prefer Vector, curl or Logstash (kv filter).'
        : parser === 'syslog'
          ? 'Filebeat parses syslog with its syslog processor and sends JSON documents to /_bulk.'
          : 'Filebeat decodes each JSON line and sends the documents to /_bulk.',
  };
}

export function logstashSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const input =
    parser === 'syslog'
      ? ['input {', '  syslog { port => 5514 }', '}']
      : ['input {', `  file { path => "/var/log/myapp/*.${parser === 'json' ? 'json' : 'log'}" }`, '}'];
  const filter = parser === 'syslog' ? [] : ['filter {', `  ${parser === 'json' ? 'json' : 'kv'} { source => "message" }`, '}', ''];
  return {
    id: 'logstash',
    label: 'Logstash',
    file: 'logstash.conf',
    text: [
      ...input,
      '',
      ...filter,
      'output {',
      '  elasticsearch {',
      `    hosts => ["${t.base}"]`,
      '    # the token as the password of basic authentication',
      '    user => "logstash"',
      `    password => "${token}"`,
      '    index => "logs"',
      '    manage_template => false',
      '    ilm_enabled => false',
      '    # items answered 429 are retried without end (the plugin\'s default), backing off up to:',
      '    retry_max_interval => 64',
      '  }',
      '}',
    ].join('\n'),
    note: 'Logstash parses the events itself and sends them to /_bulk as JSON documents.',
  };
}

/** The fields every JSON-sending syslog recipe writes: the syslog parser's own names, so rows look alike whatever sent them. */
const SYSLOG_JSON_NAMES = ['timestamp', 'hostname', 'app_name', 'proc_id', 'facility', 'severity', 'message'] as const;

/**
 * rsyslog to /_bulk through omelasticsearch (Debian: rsyslog-elasticsearch; its rsyslog has no
 * omhttp). Lossless: a disk-assisted queue that keeps what the appliance has not taken, endless
 * retries of a failed request, and items the appliance answers 429 (queue full) sent again through
 * retryfailures.
 */
export function rsyslogSnippet(t: Target, token: string): ShipperSnippet {
  const rfc3339 = 'dateFormat="rfc3339"';
  const props: Record<(typeof SYSLOG_JSON_NAMES)[number], string> = {
    timestamp: `name="timereported" ${rfc3339}`,
    hostname: 'name="hostname"',
    app_name: 'name="app-name"',
    proc_id: 'name="procid"',
    facility: 'name="syslogfacility-text"',
    severity: 'name="syslogseverity-text"',
    message: 'name="msg" droplastlf="on"',
  };
  return {
    id: 'rsyslog',
    label: 'rsyslog',
    file: '/etc/rsyslog.d/60-log-appliance.conf',
    text: [
      'module(load="omelasticsearch")   # Debian: apt install rsyslog-elasticsearch',
      '',
      '# one JSON document per message, with the names the appliance\'s syslog parser uses',
      'template(name="log_appliance_doc" type="list" option.jsonf="on") {',
      ...SYSLOG_JSON_NAMES.map((n) => `  property(outname="${n}" ${props[n]} format="jsonf")`),
      '}',
      '',
      'ruleset(name="log_appliance") {',
      '  action(type="omelasticsearch"',
      `    server="${t.host}" serverport="${t.port}" usehttps="${t.tls ? 'on' : 'off'}"`,
      '    # the token as the password of basic authentication',
      `    uid="rsyslog" pwd="${token}"`,
      '    searchIndex="rsyslog" template="log_appliance_doc"',
      '    bulkmode="on" maxbytes="4m"',
      '    # items answered 429 (the appliance\'s queue is full) come back here and are sent again',
      '    retryfailures="on" retryruleset="log_appliance"',
      '    action.resumeRetryCount="-1" action.resumeInterval="2"',
      '    queue.type="LinkedList" queue.size="200000" queue.dequeueBatchSize="1000"',
      '    queue.filename="log_appliance" queue.saveOnShutdown="on")',
      '}',
      'call log_appliance',
    ].join('\n'),
    note: 'Posts every message rsyslog handles to /_bulk as JSON (omelasticsearch, in Debian\'s rsyslog-elasticsearch package; Debian\'s rsyslog has no omhttp). Failed requests and items the appliance asks to retry are sent again; the queue spills to disk while the appliance is away.',
  };
}

/**
 * rsyslog to a syslog listener with omfwd (in every rsyslog build): RFC 5424 over TCP, octet-counted.
 * The listener, not a token, is named here; it maps to this token on Admin › Syslog listeners.
 */
export function rsyslogForwardSnippet(t: Target, _token: string, listener: SyslogTarget = DEFAULT_LISTENER): ShipperSnippet {
  return {
    id: 'rsyslog-omfwd',
    label: 'rsyslog (omfwd)',
    file: '/etc/rsyslog.d/60-log-appliance.conf',
    text: [
      'ruleset(name="log_appliance_fwd") {',
      '  action(type="omfwd"',
      `    target="${t.host}" port="${listener.port}" protocol="${listener.protocol}"`,
      ...(listener.protocol === 'tcp' ? ['    TCP_Framing="octet-counted"'] : []),
      '    template="RSYSLOG_SyslogProtocol23Format"',
      '    action.resumeRetryCount="-1" action.resumeInterval="2"',
      '    queue.type="LinkedList" queue.size="200000"',
      '    queue.filename="log_appliance_fwd" queue.saveOnShutdown="on")',
      '}',
      'call log_appliance_fwd',
    ].join('\n'),
    note: `Forwards every message as an RFC 5424 line to a ${listener.protocol.toUpperCase()} syslog listener on port ${listener.port}, which an admin opens for this token (Admin › Syslog listeners). TCP is lossless: the appliance slows rsyslog rather than dropping, and rsyslog's queue keeps the rest; over UDP nothing tells rsyslog of a loss.`,
  };
}

/** syslog-ng's http() to /api/v1/ingest: JSON lines in batches, flow control so nothing is dropped. */
export function syslogNgSnippet(t: Target, token: string): ShipperSnippet {
  return {
    id: 'syslog-ng',
    label: 'syslog-ng',
    file: '/etc/syslog-ng/conf.d/log-appliance.conf',
    text: [
      '# Debian: apt install syslog-ng-mod-http',
      'destination d_log_appliance {',
      '  http(',
      `    url("${t.base}${INGEST}")`,
      '    method("POST")',
      `    headers("Authorization: Bearer ${token}", "Content-Type: application/x-ndjson")`,
      `    body("${SYSLOG_NG_JSON}")`,
      '    # with flow-control a source holds at most log-iw-size (100) messages in flight: a bigger',
      '    # batch would only ever leave on its timeout',
      '    batch-lines(100)',
      '    batch-timeout(250)',
      '    workers(2)',
      '    frac-digits(3)   # milliseconds in ${ISODATE}',
      '    # a refused batch is sent again after a second, not the default minute',
      '    time-reopen(1)',
      '  );',
      '};',
      '',
      '# s_src is the distribution\'s default source; flow-control stops reading it while the destination is behind',
      'log { source(s_src); destination(d_log_appliance); flags(flow-control); };',
    ].join('\n'),
    note: 'Posts batches of up to 100 JSON lines (one per message, with the original time and the syslog parser\'s field names) to /api/v1/ingest; with flow-control syslog-ng waits instead of dropping while the appliance is busy.',
  };
}

/** syslog-ng's elasticsearch-http() to /_bulk (the SCL driver over http()). */
export function syslogNgBulkSnippet(t: Target, token: string): ShipperSnippet {
  return {
    id: 'syslog-ng-bulk',
    label: 'syslog-ng (elasticsearch-http)',
    file: '/etc/syslog-ng/conf.d/log-appliance.conf',
    text: [
      '# Debian: apt install syslog-ng-mod-http; the driver comes with scl.conf (included by the default syslog-ng.conf)',
      'destination d_log_appliance_bulk {',
      '  elasticsearch-http(',
      `    url("${t.base}/_bulk")`,
      '    index("syslog-ng")',
      '    type("")',
      '    # the token as the password of basic authentication',
      '    user("syslog-ng")',
      `    password("${token}")`,
      `    template("${SYSLOG_NG_JSON}")`,
      '    batch-lines(100)   # at most the source\'s log-iw-size (flow-control)',
      '    batch-timeout(250)',
      '    frac-digits(3)',
      '    time-reopen(1)',
      '  );',
      '};',
      '',
      'log { source(s_src); destination(d_log_appliance_bulk); flags(flow-control); };',
    ].join('\n'),
    note: 'Sends batches of up to 100 documents to /_bulk. syslog-ng reads only the status of the answer, so a busy appliance refuses the whole batch (429) and syslog-ng sends it again.',
  };
}

/** What syslog-ng's format-json writes for a message: the syslog parser's names, the ISO time with its zone. */
const SYSLOG_NG_JSON =
  '$(format-json timestamp=${ISODATE} hostname=${HOST} app_name=${PROGRAM} proc_id=${PID} facility=${FACILITY} severity=${LEVEL} message=${MESSAGE})';

/** Network gear (switches, firewalls, routers): pointed at a syslog listener, the lines of common systems. */
export function networkGearSnippet(t: Target, _token: string, listener: SyslogTarget = { port: 5514, protocol: 'udp' }): ShipperSnippet {
  const { port, protocol } = listener;
  return {
    id: 'network-gear',
    label: 'Network gear',
    file: 'device configuration',
    text: [
      '! Cisco IOS / IOS XE',
      `logging host ${t.host} transport ${protocol} port ${port}`,
      'logging trap informational',
      'service timestamps log datetime msec show-timezone year',
      '',
      '# Juniper Junos',
      `set system syslog host ${t.host} port ${port} any info`,
      'set system syslog time-format year millisecond',
      '',
      '# FortiGate',
      'config log syslogd setting',
      '    set status enable',
      `    set server "${t.host}"`,
      `    set port ${port}`,
      `    set mode ${protocol === 'udp' ? 'udp' : 'reliable'}`,
      'end',
      '',
      '# Linux (util-linux logger), to try it',
      `logger ${protocol === 'udp' ? '--udp' : '--tcp --octet-count'} --rfc5424 -n ${t.host} -P ${port} -t test 'hello from logger'`,
    ].join('\n'),
    note: `Devices send to a ${protocol.toUpperCase()} syslog listener on port ${port}, which an admin opens for this token (Admin › Syslog listeners; set its time zone to the devices' when they send RFC 3164 times without one). Over UDP a loss is silent; TCP (FortiGate "reliable") is slowed rather than dropped.`,
  };
}

/** Where syslog forwarders send when they cannot speak HTTP: a listener an admin opened. */
export interface SyslogTarget {
  port: number;
  protocol: 'tcp' | 'udp';
}
const DEFAULT_LISTENER: SyslogTarget = { port: 5514, protocol: 'tcp' };

/** Every shipper's snippet for one token, in the order the tabs show them. */
export function allSnippets(t: Target, token: string, parser: ParserType): ShipperSnippet[] {
  return [
    ...[curlSnippet, vectorSnippet, fluentBitSnippet, otelSnippet, filebeatSnippet, logstashSnippet].map((make) => make(t, token, parser)),
    rsyslogSnippet(t, token),
    rsyslogForwardSnippet(t, token),
    syslogNgSnippet(t, token),
    syslogNgBulkSnippet(t, token),
    networkGearSnippet(t, token),
  ];
}
