// .evtx files through the native reader (../evtx/): each event in evtx_dump's JSON shape, its text
// (every digit kept) as `raw`, the event object itself handed to the pipeline to flatten and
// normalize. Damage the reader skipped past becomes the import's errors, and skipped records
// are counted as rejected.
import { exactJsonText } from '../../shared/exact-json.ts';
import type { EvtxDecoder, EvtxRecord } from '../evtx/index.ts';
import type { ImportRecord, RecordDecoder } from './formats.ts';

export class EvtxRecords implements RecordDecoder {
  /** The event's own time, as evtx_dump's shape flattens it (the Windows normalizer's `SystemTime` comes first). */
  readonly timestampFields = ['Event.System.TimeCreated.#attributes.SystemTime', 'SystemTime'];
  private warned = 0;
  private skipped = 0;

  constructor(private readonly decoder: EvtxDecoder) {}

  push(bytes: Buffer): ImportRecord[] {
    return this.records(this.decoder.push(bytes));
  }

  end(): ImportRecord[] {
    return this.records(this.decoder.end());
  }

  takeWarnings(): string[] {
    const fresh = this.decoder.warnings.slice(this.warned).map((w) => `evtx: ${w.message}`);
    this.warned = this.decoder.warnings.length;
    return fresh;
  }

  private records(records: EvtxRecord[]): ImportRecord[] {
    const out: ImportRecord[] = records.map((r) => ({ text: exactJsonText(r.event), fields: r.event as Record<string, unknown> }));
    // A record the reader had to skip is one the file held and the import did not take.
    const skipped = this.decoder.stats.skippedRecords;
    for (; this.skipped < skipped; this.skipped++) out.push({ error: 'evtx: a damaged record was skipped (see the warnings)' });
    return out;
  }
}
