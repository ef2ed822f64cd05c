// The order of an event's fields in the results table's one-line summary: message-like fields first,
// then the event's own order. A Windows event (the shipped normalizer's names, or evtx_dump's
// nesting when none applied) opens with what an analyst reads it for, its EventID and Computer, then
// its EventData; the System envelope every event of a provider shares (the XML namespace, provider
// name and GUID, version, task, opcode, keywords, record and process ids) goes last, so it no longer
// fills the line. The row's detail shows every field whatever this order.

const MESSAGE_KEYS = ['message', 'msg', 'log', 'event.original', 'text', 'description'];
const WINDOWS_FIRST = ['EventID', 'Event.System.EventID', 'Computer', 'Event.System.Computer'];
/** The System envelope under the shipped normalizer's names (normalizers/windows-normalizer.ts). */
const WINDOWS_ENVELOPE = new Set([
  'xmlns',
  'Provider_Name',
  'Guid',
  'EventSourceName',
  'Version',
  'Level',
  'Task',
  'Opcode',
  'Keywords',
  'SystemTime',
  'EventRecordID',
  'ActivityID',
  'RelatedActivityID',
  'Execution_ProcessID',
  'ThreadID',
  'Channel',
  'Security_UserID',
  'sigma_category',
]);

/** A row holding a Windows event: the shipped normalizer's EventID with its provider, or evtx_dump's nesting. */
export function isWindowsEvent(row: Record<string, unknown>): boolean {
  return ('EventID' in row && 'Provider_Name' in row) || 'Event.System.EventID' in row;
}

/** `keys` (the row's fields, in the event's order) in the summary's order. */
export function summaryOrder(keys: string[], row: Record<string, unknown>): string[] {
  const windows = isWindowsEvent(row);
  const rank = (k: string): number => {
    const m = MESSAGE_KEYS.indexOf(k);
    if (m >= 0) return m;
    if (!windows) return MESSAGE_KEYS.length;
    const w = WINDOWS_FIRST.indexOf(k);
    if (w >= 0) return MESSAGE_KEYS.length + w;
    const envelope = WINDOWS_ENVELOPE.has(k) || k.startsWith('Event.System.') || k.startsWith('Event.#attributes');
    return MESSAGE_KEYS.length + WINDOWS_FIRST.length + (envelope ? 1 : 0);
  };
  // A stable sort: fields of the same rank keep the event's order.
  return keys.map((k, i) => [rank(k), i, k] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , k]) => k);
}
