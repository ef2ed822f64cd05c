// RFC 3164 times carry no zone and often no year: a syslog listener reads them in its time zone
// (service/src/ingest/parsers/time-zone.ts through the syslog parser), with the year taken on that
// zone's calendar. Offsets come from the runtime's zone data.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSyslogAt } from '../../service/src/ingest/parsers/syslog.ts';
import { TimeZone } from '../../service/src/ingest/parsers/time-zone.ts';

const berlin = TimeZone.of('Europe/Berlin')!;
const at = (line: string, now: string, zone: TimeZone | null) => parseSyslogAt(line, Date.parse(now), zone).timestamp;

test('a time without a zone is the zone\'s wall-clock time, winter and summer', () => {
  assert.equal(at('<13>Jan  2 03:04:05 h app: x', '2026-11-25T12:00:00Z', berlin), '2026-01-02T03:04:05+01:00');
  assert.equal(at('<13>Jul  2 03:04:05 h app: x', '2026-11-25T12:00:00Z', berlin), '2026-07-02T03:04:05+02:00');
  assert.equal(at('<13>Jul  2 03:04:05.250 h app: x', '2026-11-25T12:00:00Z', TimeZone.of('America/New_York')), '2026-07-02T03:04:05.250-04:00');
  assert.equal(at('<13>Jul  2 03:04:05 h app: x', '2026-11-25T12:00:00Z', null), '2026-07-02T03:04:05Z', 'no zone: UTC');
  // An ISO time without a zone gets one; one with a zone keeps it.
  assert.equal(at('<13>2026-03-01T10:00:00 h app: x', '2026-11-25T12:00:00Z', berlin), '2026-03-01T10:00:00+01:00');
  assert.equal(at('<13>2026-03-01T10:00:00Z h app: x', '2026-11-25T12:00:00Z', berlin), '2026-03-01T10:00:00Z');
});

test('clock changes: a skipped hour takes the offset before it, a repeated hour its first pass', () => {
  assert.equal(at('<13>Mar 29 02:30:00 h app: x', '2026-11-25T12:00:00Z', berlin), '2026-03-29T02:30:00+01:00');
  assert.equal(at('<13>Oct 25 02:30:00 h app: x', '2026-11-25T12:00:00Z', berlin), '2026-10-25T02:30:00+02:00');
  assert.equal(at('<13>Oct 25 03:30:00 h app: x', '2026-11-25T12:00:00Z', berlin), '2026-10-25T03:30:00+01:00');
});

test('the year is the zone\'s: just after midnight on New Year in Berlin it is already next year there', () => {
  // 23:30 UTC on 31 December is 00:30 on 1 January in Berlin.
  assert.equal(at('<13>Jan  1 00:20:00 h app: x', '2026-12-31T23:30:00Z', berlin), '2027-01-01T00:20:00+01:00');
  assert.equal(at('<13>Jan  1 00:20:00 h app: x', '2026-12-31T23:30:00Z', null), '2026-01-01T00:20:00Z', 'in UTC it is still 2026');
  // A date more than a day ahead of the zone's now is last year's.
  assert.equal(at('<13>Dec 31 23:00:00 h app: x', '2027-01-01T00:30:00Z', berlin), '2026-12-31T23:00:00+01:00');
});

test('unknown zones are refused', () => {
  assert.equal(TimeZone.of('Mars/Olympus'), null);
  assert.equal(TimeZone.of('UTC')!.isUtc, true);
});
