// The results table's one-line summary of an event (renderer/src/lib/search/event-summary.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summaryOrder } from '../../renderer/src/lib/search/event-summary.ts';

const order = (row: Record<string, unknown>) => summaryOrder(Object.keys(row), row);

test('message-like fields lead, the rest keep the event\'s order', () => {
  assert.deepEqual(order({ host: 'a', level: 'info', msg: 'm', message: 'x', user: 'u' }), ['message', 'msg', 'host', 'level', 'user']);
});

test('a Windows event under the shipped normalizer opens with EventID, Computer and its EventData; the envelope goes last', () => {
  const row = {
    xmlns: 'http://schemas.microsoft.com/win/2004/08/events/event',
    Provider_Name: 'Microsoft-Windows-Sysmon',
    Guid: '5770385F-C22A-43E0-BF4C-06F5698FFBD9',
    EventID: 1,
    Version: 5,
    Level: 4,
    Channel: 'Microsoft-Windows-Sysmon/Operational',
    Computer: 'PC01.example.corp',
    Image: 'C:\\Windows\\System32\\whoami.exe',
    CommandLine: 'whoami /priv',
    User: 'EXAMPLE\\alice',
    sigma_category: 'process_creation',
  };
  assert.deepEqual(order(row), ['EventID', 'Computer', 'Image', 'CommandLine', 'User', 'xmlns', 'Provider_Name', 'Guid', 'Version', 'Level', 'Channel', 'sigma_category']);
});

test('evtx_dump\'s nesting, when no normalizer applied: the same, by path', () => {
  const row = {
    'Event.#attributes.xmlns': 'http://schemas.microsoft.com/win/2004/08/events/event',
    'Event.System.Provider.#attributes.Name': 'Microsoft-Windows-Security-Auditing',
    'Event.System.EventID': 4624,
    'Event.System.Computer': 'DC01',
    'Event.EventData.TargetUserName': 'alice',
    'Event.EventData.LogonType': 3,
  };
  assert.deepEqual(order(row), [
    'Event.System.EventID',
    'Event.System.Computer',
    'Event.EventData.TargetUserName',
    'Event.EventData.LogonType',
    'Event.#attributes.xmlns',
    'Event.System.Provider.#attributes.Name',
  ]);
});

test('other logs that happen to have a Level or Version are left in their order', () => {
  assert.deepEqual(order({ Version: 2, Level: 'warn', host: 'a', EventID: 7 }), ['Version', 'Level', 'host', 'EventID']);
});
