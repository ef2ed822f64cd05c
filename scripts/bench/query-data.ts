// The query benchmark's logs (bench:query), generated inside the engine: web access logs, Sysmon-like
// process/network/file events and Windows logon events, every value a deterministic function of the
// row number. bench:archive writes the same logs as archived Parquet through the archive's own writer.
import { createHash } from 'node:crypto';

const FIRST = ('james mary robert patricia john jennifer michael linda david elizabeth william barbara richard susan ' +
  'joseph jessica thomas sarah charles karen christopher lisa daniel nancy matthew betty anthony margaret mark ' +
  'sandra donald ashley steven kimberly paul emily andrew donna joshua michelle kenneth carol kevin amanda brian ' +
  'dorothy george melissa timothy deborah').split(' ');
const LAST = ('smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez ' +
  'wilson anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis ' +
  'robinson walker young allen king wright scott torres nguyen hill flores green adams nelson baker hall rivera ' +
  'campbell mitchell carter roberts gomez phillips evans turner diaz parker cruz edwards collins reyes stewart ' +
  'morris morales murphy cook rogers gutierrez ortiz morgan cooper peterson bailey reed kelly howard ramos kim cox ' +
  'ward richardson watson brooks chavez wood james bennett gray mendoza ruiz hughes price alvarez castillo sanders ' +
  'patel myers long ross foster').split(' ');
/** User name of popularity rank i (0 = most frequent); 50 × 100 = 5,000 users. */
export const userName = (i: number) => `${FIRST[i % 50]}.${LAST[Math.floor(i / 50)]}`;
export const USERS = Array.from({ length: 5000 }, (_, i) => userName(i));

const WEB_HOSTS = Array.from({ length: 20 }, (_, i) => `web-${String(i + 1).padStart(2, '0')}.dmz.example.net`);
const SERVER_HOSTS = ['dc', 'sql', 'file', 'exch', 'app', 'build'].flatMap((r) =>
  Array.from({ length: 5 }, (_, i) => `${r}-${String(i + 1).padStart(2, '0')}.corp.example.net`),
);
const WORKSTATIONS = Array.from({ length: 150 }, (_, i) => `ws-${1001 + i}.corp.example.net`);
const WIN_HOSTS = [...SERVER_HOSTS, ...WORKSTATIONS]; // 180 + 20 web hosts = 200

const URLS = [
  '/', '/index.html', '/login', '/logout', '/health', '/api/v1/orders', '/api/v1/cart', '/api/v1/users/me',
  '/api/v1/search?q=shoes', '/api/v1/search?q=red+jacket', '/static/js/app.3f9c2.js', '/static/css/main.css',
  '/images/logo.png', '/favicon.ico', '/checkout', '/products/list', '/robots.txt', '/api/v2/inventory',
];
const ADMIN_URLS = ['/admin/login.php', '/admin/config.php?debug=1', '/wp-admin/admin-ajax.php', '/phpmyadmin/index.php'];
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
  'curl/8.5.0',
  'python-requests/2.32.3',
];
const IMAGES = [
  'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe',
  'C:\\Windows\\System32\\cmd.exe',
  'C:\\Windows\\System32\\svchost.exe',
  'C:\\Windows\\explorer.exe',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
  'C:\\Program Files\\Microsoft Office\\root\\Office16\\OUTLOOK.EXE',
  'C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE',
  'C:\\Windows\\System32\\conhost.exe',
  'C:\\Windows\\System32\\rundll32.exe',
  'C:\\Windows\\System32\\taskhostw.exe',
  'C:\\Program Files\\Mozilla Firefox\\firefox.exe',
  'C:\\Windows\\System32\\msiexec.exe',
  'C:\\Windows\\System32\\wbem\\WmiPrvSE.exe',
  'C:\\Users\\Public\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe',
  'C:\\Windows\\System32\\lsass.exe',
  'C:\\Windows\\System32\\SearchIndexer.exe',
];
const IMAGE_HASHES = IMAGES.map((i) => createHash('sha256').update(i).digest('hex').toUpperCase());
const PARENTS = ['C:\\Windows\\explorer.exe', 'C:\\Windows\\System32\\services.exe', 'C:\\Windows\\System32\\svchost.exe', 'C:\\Windows\\System32\\cmd.exe', 'C:\\Windows\\System32\\winlogon.exe'];
const ARGS = [
  '-NoProfile -ExecutionPolicy Bypass -Command Get-Process',
  '/c whoami /all',
  '-k netsvcs -p -s Schedule',
  '--type=renderer --lang=en-US --field-trial-handle=1736',
  '/q /i C:\\Users\\Public\\Downloads\\setup.msi',
  'shell32.dll,Control_RunDLL',
  '/c dir C:\\ProgramData /s',
  '-Embedding',
];
const TARGET_FILES = ['C:\\Users\\Public\\Downloads\\invoice.pdf', 'C:\\Windows\\Temp\\~tmp12.tmp', 'C:\\ProgramData\\cache\\index.dat', 'C:\\Users\\Public\\Documents\\report.docx'];
const PORTS = ['443', '443', '443', '443', '80', '53', '445', '3389', '8080', '22', '5985'];
/** The rare token: a file hash seen in exactly ~10 process events (searched in lower case). */
export const RARE_HASH = createHash('sha256').update('bench rare token').digest('hex').toUpperCase();
/** The user of the field-equality query: popularity rank 200, a few hundred events per million. */
export const PROBE_USER = userName(200);
/** The dictionary match() reads in the enrichment query. */
export const DICTIONARY = 'bench_users';

const ARRAYS = {
  users: USERS,
  web_hosts: WEB_HOSTS,
  win_hosts: WIN_HOSTS,
  urls: URLS,
  admin_urls: ADMIN_URLS,
  agents: AGENTS,
  images: IMAGES,
  image_hashes: IMAGE_HASHES,
  parents: PARENTS,
  args: ARGS,
  target_files: TARGET_FILES,
  ports: PORTS,
};

/**
 * The SELECT producing rows `first … first+count-1` of N: every value from cityHash64(number, k).
 * Kinds: 50% web access (nginx), 30% Sysmon (1 process create, 3 network, 11 file), 20% Windows
 * logon events. Rows with number ≡ rareOffset (mod rareEvery) are process creates whose hash is
 * the rare token.
 */
export function generatorSql(table: string): string {
  const h = (k: number) => `cityHash64(number, ${k})`;
  const pick = (arr: string, k: number) => `{${arr}:Array(String)}[1 + ${h(k)} % length({${arr}:Array(String)})]`;
  const str = (sql: string) => `toJSONString(${sql})`; // a String expression as a JSON string literal
  // One member of a JSON object, after the first: `,"key":value` (value is JSON text).
  const m = (key: string, value: string) => `',"${key}":', ${value}`;
  const obj = (members: string[]) => `concat('{"timestamp":', ${str('iso')}, ${members.join(', ')}, '}')`;
  const web = obj([
    m('source', `'"nginx"'`),
    m('host', str(pick('web_hosts', 3))),
    m('src_ip', str('ext_ip')),
    `if(web_user, concat(${m('user', str('user'))}), '')`,
    m('method', str('method')),
    m('url', str('url')),
    m('status', 'toString(status)'),
    m('bytes', 'toString(bytes)'),
    m('duration_ms', 'toString(duration_ms)'),
    m('user_agent', str(pick('agents', 20))),
  ]);
  const sysmon = obj([
    m('source', `'"sysmon"'`),
    m('host', str(pick('win_hosts', 3))),
    m('event_id', 'toString(sysmon_id)'),
    m('user', str(`concat('CORP\\\\', user)`)),
    m('image', str('image')),
    m('pid', `toString(4 + ${h(21)} % 30000)`),
    `multiIf(
      sysmon_id = 1, concat(${[
        m('parent_image', str(pick('parents', 22))),
        m('command_line', str(`concat('"', image, '" ', ${pick('args', 23)})`)),
        m('hashes', str(`concat('SHA256=', if(rare, {rare_hash:String}, {image_hashes:Array(String)}[img]))`)),
        m('message', `'"Process Create"'`),
      ].join(', ')}),
      sysmon_id = 3, concat(${[
        m('src_ip', str('int_ip')),
        m('dst_ip', str('ext_ip')),
        m('dst_port', pick('ports', 24)),
        m('protocol', `'"tcp"'`),
        m('message', `'"Network connection detected"'`),
      ].join(', ')}),
      concat(${[m('target_filename', str(pick('target_files', 25))), m('message', `'"File created"'`)].join(', ')}))`,
  ]);
  const logon = obj([
    m('source', `'"windows-security"'`),
    m('host', str(pick('win_hosts', 3))),
    m('event_id', 'toString(logon_id)'),
    m('user', str('user')),
    m('src_ip', str('int_ip')),
    m('logon_type', `toString([2, 3, 3, 3, 10, 5][1 + ${h(26)} % 6])`),
    m('outcome', `if(logon_id = 4625, '"failure"', '"success"')`),
    m('message', `multiIf(logon_id = 4624, '"An account was successfully logged on."', logon_id = 4625, '"An account failed to log on."',
                         logon_id = 4634, '"An account was logged off."', '"Special privileges assigned to new logon."')`),
  ]);
  const status = [[820, 200], [850, 304], [870, 301], [880, 302], [930, 404], [950, 401], [960, 403], [970, 400], [985, 500], [993, 502]]
    .map(([below, code]) => `${h(10)} % 1000 < ${below}, ${code}`)
    .join(', ');
  return `
INSERT INTO ${table} (fractal_id, timestamp, ingest_timestamp, log_id, raw)
SELECT {fid:UUID}, ts, ts + toIntervalMillisecond(150 + ${h(30)} % 2000), log_id, j
FROM (
  SELECT number,
    fromUnixTimestamp64Nano(toInt64({t0:Int64} + toInt64(number) * {step:Int64} + toInt64(${h(2)} % {step:UInt64})), 'UTC') AS ts,
    concat(replaceOne(toString(toDateTime64(ts, 3, 'UTC')), ' ', 'T'), 'Z') AS iso,
    lower(concat(leftPad(hex(${h(7)}), 16, '0'), leftPad(hex(${h(8)}), 16, '0'))) AS hx,
    toUUID(concat(substring(hx, 1, 8), '-', substring(hx, 9, 4), '-4', substring(hx, 14, 3), '-a', substring(hx, 18, 3), '-', substring(hx, 21, 12))) AS log_id,
    number % {rare_every:UInt64} = {rare_offset:UInt64} AS rare,
    if(rare, 60, ${h(1)} % 100) AS kind_roll,
    {users:Array(String)}[1 + toUInt32(pow((${h(4)} % 1000000) / 1000000.0, 3) * 5000)] AS user,
    IPv4NumToString(toUInt32(167772160 + ${h(5)} % 1048576)) AS int_ip,
    IPv4NumToString(toUInt32(16777216 + ${h(6)} % 3758096384)) AS ext_ip,
    multiIf(${h(11)} % 100 < 78, 'GET', ${h(11)} % 100 < 93, 'POST', ${h(11)} % 100 < 97, 'PUT', 'DELETE') AS method,
    multiIf(${h(12)} % 100 < 2, ${pick('admin_urls', 9)},
            ${h(12)} % 100 < 20, concat('/api/v1/orders/', toString(${h(9)} % 100000)),
            ${pick('urls', 9)}) AS url,
    multiIf(${status}, 503) AS status,
    if(status = 304, 0, toUInt32(pow((${h(13)} % 10000) / 10000.0, 2) * 250000)) AS bytes,
    round(pow((${h(14)} % 10000) / 10000.0, 3) * 3000 + 0.3, 1) AS duration_ms,
    ${h(15)} % 100 < 30 AS web_user,
    if(rare, 1, [1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 11, 11, 11][1 + ${h(16)} % 14]) AS sysmon_id,
    1 + ${h(17)} % length({images:Array(String)}) AS img,
    {images:Array(String)}[img] AS image,
    [4624, 4624, 4624, 4624, 4624, 4624, 4624, 4625, 4625, 4634, 4634, 4672][1 + ${h(27)} % 12] AS logon_id,
    multiIf(kind_roll < 50, ${web}, kind_roll < 80, ${sysmon}, ${logon}) AS j
  FROM numbers({first:UInt64}, {count:UInt64})
)
SETTINGS output_format_json_escape_forward_slashes = 0, input_format_try_infer_dates = 0, input_format_try_infer_datetimes = 0`;
}


/**
 * The bound parameters of generatorSql for rows `first … first+count-1` of `logs` spread evenly over
 * [startMs, endMs - 1 min] in fractal `fractalId`.
 */
export function generatorParams(st: { fractalId: string; logs: number; startMs: number; endMs: number }, first: number, count: number): Record<string, unknown> {
  const spanNs = BigInt(st.endMs - st.startMs - 60_000) * 1_000_000n; // a minute's margin at the end
  const rareEvery = Math.max(1, Math.floor(st.logs / 10));
  return {
    ...ARRAYS,
    fid: st.fractalId,
    t0: (BigInt(st.startMs) * 1_000_000n).toString(),
    step: (spanNs / BigInt(st.logs)).toString(),
    rare_every: rareEvery,
    rare_offset: Math.floor(rareEvery / 3),
    rare_hash: RARE_HASH,
    first,
    count,
  };
}
