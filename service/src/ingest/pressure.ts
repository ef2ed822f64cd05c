// Which backpressure layer is holding ingest back right now, and since when, so a burst of 429s
// can be explained (GET /api/v1/system/pressure).
export type Layer = 'rate_limit' | 'queue' | 'spool' | 'storage' | 'disk_quota';
const LAYERS: Layer[] = ['rate_limit', 'queue', 'spool', 'storage', 'disk_quota'];

interface LayerState {
  since: string | null;
  last_triggered: string | null;
  count: number;
  detail: string;
  /** When hit() last fired (ms since the epoch). */
  lastMs: number;
  /** Set by set(): active until cleared. */
  sticky: boolean;
}

/** A layer that was triggered stays reported active for this long after the last trigger. */
const HOLD_MS = 5_000;

export class Pressure {
  private state = new Map<Layer, LayerState>();

  constructor() {
    for (const l of LAYERS) this.state.set(l, { since: null, last_triggered: null, count: 0, detail: '', lastMs: 0, sticky: false });
  }

  /** A momentary event (a 429): active now and for a few seconds after. */
  hit(layer: Layer, detail: string): void {
    const s = this.state.get(layer)!;
    const now = new Date();
    if (!this.isActive(s, now.getTime())) s.since = now.toISOString();
    s.lastMs = now.getTime();
    s.last_triggered = now.toISOString();
    s.count++;
    s.detail = detail;
  }

  /** A lasting condition (storage failing, quota exceeded): active until cleared. */
  set(layer: Layer, active: boolean, detail = ''): void {
    const s = this.state.get(layer)!;
    if (active && !s.sticky) {
      s.since = new Date().toISOString();
      s.count++;
      s.last_triggered = s.since;
    }
    s.sticky = active;
    if (active) s.detail = detail;
  }

  private isActive(s: LayerState, now: number): boolean {
    return s.sticky || now - s.lastMs < HOLD_MS;
  }

  snapshot(extra: Partial<Record<Layer, Record<string, unknown>>> = {}) {
    const now = Date.now();
    return Object.fromEntries(
      LAYERS.map((l) => {
        const s = this.state.get(l)!;
        const active = this.isActive(s, now);
        return [l, { active, since: active ? s.since : null, last_triggered: s.last_triggered, events: s.count, detail: s.detail, ...extra[l] }];
      }),
    );
  }
}
