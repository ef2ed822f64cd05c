// What the tray tells at a glance, from the service's own readings (Appliance.activity): the
// current ingest rate (logs stored per second between two readings) and any import in progress
// (its file, or how many files, the share read and the events so far). Plain text for the
// tooltip and for the disabled lines at the top of the tray menu; no Electron here.
import type { ApplianceActivity } from '../../service/src/appliance.ts';

export interface TrayView {
  /** The status lines, in menu order: the ingest rate, then the imports. */
  lines: string[];
  tooltip: string;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const percent = (share: number) => `${Math.min(99, Math.floor(share * 100))}%`;

/** The lines for a rate (null: not measured yet) and the running imports. */
export function trayView(address: string, rate: number | null, imports: ApplianceActivity['imports']): TrayView {
  const ingest = rate === null ? 'Ingest rate: measuring…' : rate >= 0.5 ? `Ingesting ${count(rate)} logs/s` : 'Ingest idle';
  let importing = 'No import running';
  if (imports.length > 0) {
    const size = imports.reduce((n, i) => n + i.sizeBytes, 0);
    const read = imports.reduce((n, i) => n + Math.min(i.bytesRead, i.sizeBytes), 0);
    const events = imports.reduce((n, i) => n + i.eventsAccepted, 0);
    const what = imports.length === 1 ? `${imports[0]!.name} into ${imports[0]!.fractal}` : `${imports.length} files`;
    importing = `Importing ${what}: ${percent(size > 0 ? read / size : 0)}, ${count(events)} event${events === 1 ? '' : 's'}`;
  }
  return { lines: [ingest, importing], tooltip: `Log Appliance: ingest at ${address}\n${ingest}\n${importing}` };
}

/** Readings of the service turned into views; the rate is the stored logs between the last two readings. */
export class TrayStatus {
  private last: { at: number; stored: number } | null = null;

  constructor(
    private readonly address: string,
    private readonly read: () => Promise<ApplianceActivity>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async sample(): Promise<TrayView> {
    const a = await this.read();
    const at = this.now();
    const rate = this.last && at > this.last.at ? ((a.logsStored - this.last.stored) * 1000) / (at - this.last.at) : null;
    this.last = { at, stored: a.logsStored };
    return trayView(this.address, rate, a.imports);
  }
}
