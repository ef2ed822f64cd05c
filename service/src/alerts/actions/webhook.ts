// One webhook delivery attempt: the body (the envelope, or the rendered template capped at 8 MB),
// the method, content type, custom headers and authentication, sent with the webhook's time-out.
// The outcome says whether another attempt may help: a template that fails to render never will.
import type { FiringPayload } from '../executions-store.ts';
import { RenderLimitError, Template, TemplateExecError } from '../template/index.ts';
import type { Action } from './actions-store.ts';
import { alertLink, envelope, templateData } from './payload.ts';

/** What the receiver answered is kept up to this many characters (execution history, send-test). */
const RESPONSE_KEEP = 64 * 1024;

export interface Rendered {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface AttemptOutcome {
  ok: boolean;
  /** False when retrying cannot help (the template fails on this firing). */
  retryable: boolean;
  status_code: number | null;
  error: string;
  response_body: string;
  duration_ms: number;
  /** What was sent, secrets masked (absent when nothing could be built). */
  sent?: Rendered;
}

export class RenderError extends Error {}

/** The request a firing makes for this webhook (throws RenderError when the template fails). */
export function renderWebhook(w: Action<'webhook'>, p: FiringPayload, baseUrl: string | null, extraHeaders: Record<string, string> = {}): Rendered {
  const link = w.include_alert_link ? alertLink(baseUrl, p) : null;
  let body: string;
  if (w.body_mode === 'template') {
    try {
      body = Template.compile(w.body_template, 'body_template').render(templateData(p, link));
    } catch (err) {
      if (err instanceof TemplateExecError || err instanceof RenderLimitError || (err as Error).name === 'TemplateError') {
        throw new RenderError(`The body template failed to render: ${(err as Error).message}`);
      }
      throw err;
    }
  } else body = JSON.stringify(envelope(p, link));
  const headers: Record<string, string> = { 'content-type': w.content_type, 'user-agent': 'log-appliance-alerts/1', ...extraHeaders };
  for (const [k, v] of Object.entries(w.headers)) headers[k.toLowerCase()] = v;
  if (w.auth_type === 'bearer' && w.auth.token) headers.authorization = `Bearer ${w.auth.token}`;
  if (w.auth_type === 'basic' && w.auth.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${w.auth.username}:${w.auth.password ?? ''}`).toString('base64')}`;
  return { method: w.method, url: w.url, headers, body };
}

/** The request as shown back (preview, send-test, history): authorization masked. */
export function masked(r: Rendered): Rendered {
  const headers = { ...r.headers };
  if (headers.authorization) headers.authorization = headers.authorization.replace(/^(\S+)\s.*$/, '$1 ••••••');
  return { ...r, headers };
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
    size += value.length;
    if (size >= RESPONSE_KEEP) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_KEEP);
}

/** Why fetch failed, in words a person can act on (the cause holds the socket error). */
function reason(err: unknown, timeoutS: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutS} s`;
  const cause = e.cause?.code ?? e.cause?.message;
  if (e.cause?.message?.includes('redirect count exceeded')) return 'too many redirects';
  return cause ? `request failed: ${cause}` : `request failed: ${e.message}`;
}

/** One attempt: sends the rendered request and reads (a bounded part of) the answer. */
export async function sendOnce(w: Action<'webhook'>, p: FiringPayload, baseUrl: string | null, extraHeaders: Record<string, string> = {}): Promise<AttemptOutcome> {
  const t0 = performance.now();
  let r: Rendered;
  try {
    r = renderWebhook(w, p, baseUrl, extraHeaders);
  } catch (err) {
    if (err instanceof RenderError) return { ok: false, retryable: false, status_code: null, error: err.message, response_body: '', duration_ms: 0 };
    throw err;
  }
  const sent = masked(r);
  try {
    const res = await fetch(r.url, {
      method: r.method,
      headers: r.headers,
      body: r.method === 'GET' ? undefined : r.body,
      signal: AbortSignal.timeout(w.timeout_seconds * 1000),
      redirect: 'follow',
    });
    const text = await readCapped(res);
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      retryable: !ok,
      status_code: res.status,
      error: ok ? '' : `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`,
      response_body: text,
      duration_ms: Math.round(performance.now() - t0),
      sent,
    };
  } catch (err) {
    return { ok: false, retryable: true, status_code: null, error: reason(err, w.timeout_seconds), response_body: '', duration_ms: Math.round(performance.now() - t0), sent };
  }
}
