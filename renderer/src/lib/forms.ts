// Pure helpers behind the admin forms (no DOM): turning what a person types into the values the API
// takes, and back. Unit-tested in tests/ui/forms.test.ts. Messages are sentences shown under the field.

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** "a, b\nc" → ["a","b","c"]: comma- or line-separated names, trimmed, blanks and repeats dropped. */
export function splitList(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(/[,\n]/)) {
    const t = part.trim();
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

/** A whole number in [min, max]; the empty string means "none" (null) when allowed. */
export function parseWhole(
  text: string,
  opts: { min: number; max?: number; allowEmpty?: boolean; what: string },
): Parsed<number | null> {
  const t = text.trim();
  if (t === '') {
    return opts.allowEmpty ? { ok: true, value: null } : { ok: false, error: `Enter ${opts.what}.` };
  }
  if (!/^\d+$/.test(t)) return { ok: false, error: `${capitalize(opts.what)} must be a whole number.` };
  const n = Number(t);
  if (n < opts.min) return { ok: false, error: `${capitalize(opts.what)} must be at least ${opts.min}.` };
  if (opts.max !== undefined && n > opts.max) {
    return { ok: false, error: `${capitalize(opts.what)} must be at most ${opts.max.toLocaleString('en-US')}.` };
  }
  return { ok: true, value: n };
}

export const BYTE_UNITS = ['MiB', 'GiB', 'TiB'] as const;
export type ByteUnit = (typeof BYTE_UNITS)[number];
const UNIT_BYTES: Record<ByteUnit, number> = { MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

/** "50" + "GiB" → 53687091200; empty → null (no quota). Decimals are allowed ("1.5 TiB"). */
export function parseQuota(amount: string, unit: ByteUnit): Parsed<number | null> {
  const t = amount.trim();
  if (t === '') return { ok: true, value: null };
  if (!/^\d+(\.\d+)?$/.test(t)) return { ok: false, error: 'The quota must be a number, such as 50 or 1.5.' };
  const bytes = Math.round(Number(t) * UNIT_BYTES[unit]);
  if (bytes < 1) return { ok: false, error: 'The quota must be more than zero.' };
  if (!Number.isSafeInteger(bytes)) return { ok: false, error: 'The quota is too large.' };
  return { ok: true, value: bytes };
}

/** The largest unit that shows a quota without a long fraction: 53687091200 → {"50","GiB"}. */
export function splitQuota(bytes: number | null): { amount: string; unit: ByteUnit } {
  if (bytes == null) return { amount: '', unit: 'GiB' };
  for (const unit of [...BYTE_UNITS].reverse()) {
    const v = bytes / UNIT_BYTES[unit];
    if (v >= 1 && Math.abs(v * 100 - Math.round(v * 100)) < 1e-6) return { amount: String(Math.round(v * 100) / 100), unit };
  }
  return { amount: String(Math.round((bytes / UNIT_BYTES.MiB) * 1000) / 1000), unit: 'MiB' };
}

/**
 * A value map typed one pair per line, "from=to" (split at the first "="): "4=warning" maps the value
 * "4" to "warning". Blank lines are skipped; a line without "=" or with an empty "from" is an error
 * naming the line.
 */
export function parseValueMap(text: string): Parsed<Record<string, string>> {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) return { ok: false, error: `Line ${i + 1} needs the form value=replacement.` };
    values[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  if (Object.keys(values).length === 0) return { ok: false, error: 'Add at least one value=replacement line.' };
  return { ok: true, value: values };
}

export function formatValueMap(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

export type ExpiryChoice = 'never' | '30' | '90' | '365' | 'custom';

/**
 * The `expires_at` to send: null for never, now + N days, or the end of a chosen day (a date input
 * gives "YYYY-MM-DD"; the key stays valid through that whole day in UTC).
 */
export function expiryToIso(choice: ExpiryChoice, customDate: string, now: Date = new Date()): Parsed<string | null> {
  if (choice === 'never') return { ok: true, value: null };
  if (choice !== 'custom') return { ok: true, value: new Date(now.getTime() + Number(choice) * 86_400_000).toISOString() };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(customDate)) return { ok: false, error: 'Pick the last day the key is valid.' };
  const end = new Date(`${customDate}T23:59:59.000Z`);
  if (Number.isNaN(end.getTime())) return { ok: false, error: 'Pick the last day the key is valid.' };
  if (end.getTime() <= now.getTime()) return { ok: false, error: 'The expiry date must be in the future.' };
  return { ok: true, value: end.toISOString() };
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
