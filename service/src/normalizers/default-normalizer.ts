// The normalizer the appliance ships as its default, applied by every token with normalization
// on and no normalizer of its own.
//
// It renames only names it knows, spelled as they arrive, and leaves every other name alone: no
// transforms. The conventions suggest flatten_leaf, snake_case and lowercase; as a default those
// would rename what every shipper already sends (`statusCode`, `computer_name`, nested `a.b`) and
// break the names the interface spec fixes for OTLP (`resource.service.name`, `scope.name`), so
// they are left to normalizers made for a source (docs/normalizers.md has one for Windows events).
//
// What it maps:
// - addresses and ports, in the spellings shippers use (`SourceIp`, `srcaddr`, `source.ip`,
//   `client-ip`, …), onto `src_ip`, `dst_ip`, `src_port`, `dst_port` (the aliases ingest tokens
//   applied before normalizers existed, every spelling they matched);
// - user names (`userName`, `user_name`, `user.name`, …) onto `user`; a Windows `Computer` onto
//   `computer_name`;
// - syslog-ng's format-json names and rsyslog's (its %jsonmesg% properties and the usual JSON
//   templates) onto the names the syslog parser gives: `message`, `hostname`, `app_name`,
//   `proc_id`, `msg_id`, `severity`, `severity_name`, `facility`, `facility_name`, `priority`;
// - time fields: syslog-ng's ISODATE and DATE (`Nov 25 16:00:07`: read in the current year, or
//   the previous one when that would be ahead) and rsyslog's timereported.
import type { FieldMapping, NormalizerDefinition } from './definition.ts';
import { BUILTIN_ALIASES, spellings } from './legacy-rules.ts';

export const DEFAULT_NORMALIZER_NAME = 'Default';
export const DEFAULT_NORMALIZER_DESCRIPTION =
  'Shipped with the appliance: addresses, ports and user names in their usual spellings, and syslog-ng and rsyslog names, onto one name each; everything else as it arrives.';

/** Every spelling of the old built-in aliases, grouped by target. */
function addressMappings(): FieldMapping[] {
  const byTarget = new Map<string, string[]>();
  for (const [words, target] of BUILTIN_ALIASES) {
    const list = byTarget.get(target) ?? [];
    for (const s of spellings(words)) if (s !== target && !list.includes(s)) list.push(s);
    byTarget.set(target, list);
  }
  return [...byTarget].map(([target, sources]) => ({ sources, target }));
}

export const DEFAULT_NORMALIZER: NormalizerDefinition = {
  transforms: [],
  field_mappings: [
    ...addressMappings(),
    { sources: ['userName', 'UserName', 'user_name', 'username', 'Username', 'USERNAME', 'user.name'], target: 'user' },
    { sources: ['Computer', 'ComputerName', 'computerName', 'computername'], target: 'computer_name' },
    // syslog-ng $(format-json --scope rfc5424 …)
    { sources: ['MESSAGE', 'MSG'], target: 'message' },
    { sources: ['HOST', 'sysloghost'], target: 'hostname' },
    { sources: ['PROGRAM', 'programname', 'app-name'], target: 'app_name' },
    { sources: ['PID', 'procid'], target: 'proc_id' },
    { sources: ['MSGID', 'msgid'], target: 'msg_id' },
    { sources: ['PRIORITY', 'LEVEL', 'syslogseverity-text', 'syslogpriority-text'], target: 'severity_name' },
    { sources: ['FACILITY', 'syslogfacility-text'], target: 'facility_name' },
    // rsyslog properties, and syslog-ng's numeric macros beside them (migration 12 adds those to
    // installs made before)
    { sources: ['syslogseverity', 'syslogpriority', 'LEVEL_NUM'], target: 'severity' },
    { sources: ['syslogfacility', 'FACILITY_NUM'], target: 'facility' },
    { sources: ['pri', 'PRI'], target: 'priority' },
  ],
  value_mappings: [],
  timestamp_fields: ['ISODATE', 'DATE', 'timereported'],
};
