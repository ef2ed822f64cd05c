// Shared by the syntax tests: span-free comparison of trees and a corpus of the spec's queries.
import assert from 'node:assert/strict';
import { QueryParseError, type Span } from '../../service/src/query/syntax/ast.ts';
import { parseQuery } from '../../service/src/query/syntax/parser.ts';

const SPAN_KEYS = new Set(['span', 'fieldSpan', 'nameSpan', 'keySpan', 'targetSpan', 'ignored']);

/** A deep copy without any span, for structural comparison. */
export function withoutSpans<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutSpans) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!SPAN_KEYS.has(k)) out[k] = withoutSpans(v);
    return out as T;
  }
  return value;
}

/** The stages of `text`, spans removed. */
export const stagesOf = (text: string): unknown => withoutSpans(parseQuery(text).stages);

/** Asserts that parsing throws exactly this message and span (undefined: no span). */
export function assertParseError(text: string, message: string, span?: Span, errorType: 'parse' | 'translate' = 'parse'): void {
  assert.throws(
    () => parseQuery(text),
    (e: unknown) => {
      assert.ok(e instanceof QueryParseError, `not a QueryParseError: ${String(e)}`);
      assert.equal(e.message, message);
      assert.deepEqual(e.span, span);
      assert.equal(e.errorType, errorType);
      return true;
    },
    text,
  );
}

/** Queries taken from query-language.md, all valid. */
export const SPEC_QUERIES = [
  '',
  '*',
  'count()',
  '* | count()',
  '| count()',
  'a=1 count()',
  'a=1 ) | count()',
  'a=1 b=2 OR c=3',
  'a=1 "x" OR c=3',
  'a=1 | b=2 OR c=3',
  'NOT a=1 OR b=2',
  'cidr(ip, "10.0.0.0/8") OR cidr(ip, "192.168.0.0/16")',
  'status=200,301',
  'user!="a","b"',
  'image=~powershell,"pwsh"',
  'x > -5.5',
  'image=*powershell*',
  'x := bytes * 2 | groupBy(host, function=sum(x))',
  '* | multi(count(field=id, distinct=true, as=u), count(field=id, as=t)) | c := ((t - u) / t) * 0.95',
  '* | head(10) | status=500',
  '_count > 5 AND host=a',
  '* | limit(10) | groupBy(h)',
  '* | in(status, values=[200, 404])',
  '* | !cidr(src_ip, "10.0.0.0/8")',
  '* | comment(tags=incident) | groupBy(src_ip)',
  'case { a=1 | t:="x"; * | t:="y" } | count()',
  'event_id=1 | count()',
  '* | count(computer_name, unique=true)',
  '* | groupBy(computer_name) | count() | singleval()',
  '* | groupBy(host) | percentile(latency)',
  '* | stddev(rt) | iqr(rt)',
  '* | groupBy(user) | selectLast(timestamp)',
  '* | frequency(event_name) | _percentage > 1.0',
  '* | groupBy(user) | top(image, percent=true, limit=3)',
  '* | groupBy(user) | multi(count(field=event_id, distinct=true, as=unique_events), count(field=event_id, as=total))',
  '* | bucket("5m", "sum(bytes)")',
  '* | analyzeFields() | _events < 10',
  '* | eval("rate = requests / duration")',
  '* | eval(rate=requests / duration)',
  '* | hash(user, event_id, as=composite_key)',
  'case { image=~powershell | count() | sum(bytes); image=~explorer | count(); * | count() }',
  '* | case { status_code>=500 | severity := "critical" ;\n           status_code>=400 | severity := "warning" ;\n           * | severity := "info" } | groupBy(severity)',
  '* | regex(field=image, regex="(.+)\\\\\\\\(?<executable_name>.*\\\\.exe)")',
  '* | replace("\\\\d{4}", "XXXX", card, card_masked)',
  '* | lowercase(user) | user=admin',
  '* | base := "svchost.exe" | levenshtein(process_name, base) | _distance < 3',
  '* | concat([user, host], as=user_host)',
  '* | uppercase(level) | groupBy(level)',
  '* | len(commandline) | _len > 1000 | sort(_len, desc)',
  '* | logSize() | groupBy(computer_name, function=sum(_size))',
  '* | base64Decode(encoded_command) | _decoded=/invoke-expression/i',
  '* | split(email, "@", 2) | groupBy(_split)',
  '* | substr(hash, 1, 8) | table(hash, _substr)',
  '* | urldecode(request_uri) | _urldecoded=/<script/i',
  '* | coalesce(user, username, account_name) | groupBy(_coalesced)',
  '* | sprintf("https://%s:%s/%s", hostname, port, path, as=url)',
  '* | strftime("%H", as=_hour) | groupBy(_hour)',
  '* | now(snapshot_time)',
  '* | table(timestamp, image, user, limit=50)',
  '* | groupBy(image) | table(image, count)',
  '* | sort(timestamp, order=asc) | limit(100)',
  'level=error | tail(20)',
  '* | dedup(src_ip, dst_ip) | table(src_ip, dst_ip, dst_port)',
  'action="denied" | join(src_ip) { action="login_success" | groupBy(src_ip) } | _join__count > 10',
  'chain(user, within=5m) { event_id=4624; event_id=1 | image=/powershell/i } | chain_count > 1',
  '* | groupBy(user) | madOutlier(_count) | _is_outlier = 1',
  '* | groupBy(status) | piechart(limit=5)',
  'status_code>=400 | groupBy(status_code) | barchart()',
  '* | groupBy(status) | timechart(span=5m, function=count())',
  '* | avg(response_time) | singleval(label="Avg response")',
  '* | heatmap(x=user, y=action, value=sum(bytes), limit=20)',
  'event_id=1 | table(process_guid, parent_process_guid, image) | graph(child=process_guid, parent=parent_process_guid, labels=image)',
  '* | groupBy(src_ip, dst_ip) | mesh(src=src_ip, dst=dst_ip, directed=true)',
  '* | match(dict="threat_intel", field=src_ip, column=ip, include=[threat_score,category])',
  '* | lookupIP(field=src_ip, include=[latitude,longitude,country]) | graphWorld(label=country)',
  'event_id=3 | model_lookup(model="beacons", key=[src_ip, dst_ip, dst_port]) | beacon_score > 0.8',
  'event_id=1 | dfs(child=process_guid, parent=parent_process_guid, start="{GUID}", depth=3, include=[image]) | graph(child=process_guid, parent=parent_process_guid, labels=image)',
  'ptg(start="{GUID}", direction=backward, depth=20) | _depth <= 3',
  'pgr(start="{GUID}") | anomaly_score >= 0.9 | count()',
  '* | mitre(tags=alert_labels, by=computer_name)',
  'user="Zoë" | groupBy(host)',
  'tag="🔥" | "x" /C:\\\\Windows/i',
  'image=~zoë =^a',
  'NOT (a=1 OR NOT b=2) AND (c=3 OR (d=4 AND e=5))',
  'x := -5 | y := "it\'s" | z := f(a, b) - (1 + 2) / 3',
] as const;
