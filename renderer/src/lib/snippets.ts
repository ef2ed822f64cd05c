// Ready-to-paste shipper configurations for one ingest token (pure: unit-tested in tests/ui/snippets.test.ts).
//
// What the appliance accepts (service/src/ingest): POST /api/v1/ingest with a Bearer token, the body
// split into records by the token's parser (json: JSON values or NDJSON; kv and syslog: one record per
// line, a line starting with "{" is read as JSON); /_bulk in the Elasticsearch bulk format, where the
// token may also arrive as Basic password or `ApiKey base64(id:token)`; OTLP/HTTP at /v1/logs.
// Syslog reaches it only over HTTP, so syslog forwarders post lines to /api/v1/ingest.
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
      '  }',
      '}',
    ].join('\n'),
    note: 'Logstash parses the events itself and sends them to /_bulk as JSON documents.',
  };
}

export function rsyslogSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const template =
    parser === 'syslog'
      ? ['  # RFC 5424 lines, read by this token\'s syslog parser', '  template="RSYSLOG_SyslogProtocol23Format"']
      : ['  # one JSON object per message (rsyslog\'s built-in JSON template)', '  template="StdJSONFmt"'];
  return {
    id: 'rsyslog',
    label: 'rsyslog',
    file: '/etc/rsyslog.d/60-log-appliance.conf',
    text: [
      'module(load="omhttp")',
      '',
      'action(',
      '  type="omhttp"',
      `  server="${t.host}"`,
      `  serverport="${t.port}"`,
      `  usehttps="${t.tls ? 'on' : 'off'}"`,
      `  restpath="${INGEST.slice(1)}"`,
      `  httpheaders=["Authorization: Bearer ${token}"]`,
      ...template,
      '  batch="on"',
      '  batch.format="newline"',
      '  batch.maxsize="500"',
      '  action.resumeRetryCount="-1"',
      ')',
    ].join('\n'),
    note:
      parser === 'syslog'
        ? 'Forwards everything rsyslog receives over HTTP, one RFC 5424 line per record (needs the omhttp module).'
        : 'Forwards everything rsyslog receives over HTTP as JSON lines (needs the omhttp module). A token with parser syslog keeps the original syslog lines instead.',
  };
}

export function syslogNgSnippet(t: Target, token: string, parser: ParserType): ShipperSnippet {
  const body =
    parser === 'syslog'
      ? ['    headers("Authorization: Bearer ' + token + '", "Content-Type: text/plain")', '    body("<${PRI}>${ISODATE} ${HOST} ${MSGHDR}${MSG}")']
      : [
          '    headers("Authorization: Bearer ' + token + '", "Content-Type: application/x-ndjson")',
          '    body("$(format-json --scope rfc5424 --key ISODATE)")',
        ];
  return {
    id: 'syslog-ng',
    label: 'syslog-ng',
    file: '/etc/syslog-ng/conf.d/log-appliance.conf',
    text: [
      'destination d_log_appliance {',
      '  http(',
      `    url("${t.base}${INGEST}")`,
      '    method("POST")',
      ...body,
      '    batch-lines(500)',
      '    batch-timeout(1000)',
      '  );',
      '};',
      '',
      '# s_src is the distribution\'s default source; use yours',
      'log { source(s_src); destination(d_log_appliance); };',
    ].join('\n'),
    note:
      parser === 'syslog'
        ? 'Posts one syslog line per message (timestamp in ISO form, with year and zone); batches are newline-separated.'
        : 'Posts one JSON object per message; batches are newline-separated.',
  };
}

/** Every shipper's snippet for one token, in the order the tabs show them. */
export function allSnippets(t: Target, token: string, parser: ParserType): ShipperSnippet[] {
  return [curlSnippet, vectorSnippet, fluentBitSnippet, otelSnippet, filebeatSnippet, logstashSnippet, rsyslogSnippet, syslogNgSnippet].map(
    (make) => make(t, token, parser),
  );
}
