// The Windows event log normalizer the appliance ships beside its default (SQLite migration 18):
// `.evtx` files, as the importer reads them, and `evtx_dump -o json` exports nest every field under
// `Event.System` and `Event.EventData`; this flattens them to the names SigmaHQ's Windows rules use
// (`Image`, `CommandLine`, `EventID`, `Provider_Name`, …), sets `sigma_category` from Sysmon's event
// id and reads the time from `SystemTime`. The Evidence page applies it to dropped `.evtx` files
// unless the analyst chooses otherwise (found by its name: renamed or deleted, nothing is applied
// in its place). The definition is the one docs/normalizers-and-feeds.md documents (a test keeps
// the two equal).
import type { Db } from '../storage/sqlite.ts';
import type { NormalizerDefinition } from './definition.ts';
import { insertNormalizer, normalizerNameTaken } from './normalizers-store.ts';
import { WINDOWS_NORMALIZER_NAME } from './shipped-names.ts';

export { WINDOWS_NORMALIZER_NAME };
export const WINDOWS_NORMALIZER_DESCRIPTION =
  'Shipped with the appliance: Event.System and Event.EventData leaves under the names Sigma rules use, Sysmon event ids as Sigma categories, SystemTime as the time.';

const SYSMON_CATEGORIES: Record<string, string> = {
  '1': 'process_creation',
  '2': 'file_change',
  '3': 'network_connection',
  '5': 'process_termination',
  '6': 'driver_load',
  '7': 'image_load',
  '8': 'create_remote_thread',
  '9': 'raw_access_thread',
  '10': 'process_access',
  '11': 'file_event',
  '12': 'registry_event',
  '13': 'registry_event',
  '14': 'registry_event',
  '15': 'create_stream_hash',
  '17': 'pipe_created',
  '18': 'pipe_created',
  '19': 'wmi_event',
  '20': 'wmi_event',
  '21': 'wmi_event',
  '22': 'dns_query',
  '23': 'file_delete',
  '24': 'clipboard_change',
  '25': 'process_tampering',
  '26': 'file_delete_detected',
  '29': 'file_executable_detected',
};

export const WINDOWS_NORMALIZER: NormalizerDefinition = {
  transforms: ['flatten_leaf'],
  field_mappings: [
    { sources: ['Event.System.Provider.#attributes.Name'], target: 'Provider_Name' },
    { sources: ['Event.System.EventID.#text'], target: 'EventID' },
    { sources: ['Event.System.Execution.#attributes.ProcessID'], target: 'Execution_ProcessID' },
    { sources: ['Event.System.Security.#attributes.UserID'], target: 'Security_UserID' },
  ],
  value_mappings: [{ from_field: 'EventID', to_field: 'sigma_category', map: SYSMON_CATEGORIES }],
  timestamp_fields: ['SystemTime'],
};

/** SQLite migration 18: the shipped normalizer, unless one of its name exists already. */
export function addWindowsNormalizer(db: Db): void {
  if (normalizerNameTaken(db, WINDOWS_NORMALIZER_NAME)) return;
  insertNormalizer(db, { name: WINDOWS_NORMALIZER_NAME, description: WINDOWS_NORMALIZER_DESCRIPTION, ...WINDOWS_NORMALIZER, createdBy: 'system' });
}
