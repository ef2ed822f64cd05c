// What a browser does on its own, refused or locked down for every route, present and future:
//
// - Security headers on every response (hijacked streams included): a Content-Security-Policy
//   that lets the UI load only its own scripts and never be framed, nosniff, a same-origin
//   referrer policy.
// - Cross-site requests: a browser attaches the session cookie by itself (SameSite=Lax still sends
//   it from another port of the same host, which is "same-site"), so an unsafe request (POST, PUT,
//   PATCH, DELETE) that carries no credential of its own (no Authorization or X-API-Key header,
//   which no page of another origin can add without a CORS preflight this service never grants)
//   must come from the appliance's own pages: `Sec-Fetch-Site` same-origin (or none), and an
//   `Origin`, when sent, naming this host (or SVC_BASE_URL's). With the session cookie, a body in
//   a type a cross-site form or `fetch` may send without a preflight (text/plain, urlencoded,
//   multipart) is refused too unless the browser itself says `Sec-Fetch-Site: same-origin` (a
//   header no page can set): for browsers that send neither header. The import page's multipart
//   uploads come with it.
// Shippers, scripts and API keys send a credential of their own (or no cookie), so they pass.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './app.ts';
import { HttpError } from './errors.ts';

export interface BrowserDefenceOptions {
  /** The session cookie's name; with it present, simple-form body types are refused on unsafe requests. */
  sessionCookie?: string;
  /** SVC_BASE_URL: the address people reach the appliance at, also accepted as an Origin. */
  publicUrl?: string | null;
}

/** The UI's policy: its own scripts only, inline styles (CodeMirror, Svelte style attributes), no framing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Content types a page of any origin may send without a CORS preflight. */
const SIMPLE_BODY_TYPES = /^\s*(text\/plain|application\/x-www-form-urlencoded|multipart\/form-data)\b/i;

/** host[:port] of an origin or a Host header, lower-cased, without the scheme's default port. */
function hostOf(value: string, scheme?: string): string | null {
  try {
    const u = new URL(scheme ? `${scheme}://${value}` : value);
    return u.host.toLowerCase();
  } catch {
    return null;
  }
}

function presentsOwnCredential(req: FastifyRequest): boolean {
  return req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined;
}

function hasCookie(req: FastifyRequest, name: string): boolean {
  const header = req.headers.cookie;
  return typeof header === 'string' && header.split(';').some((c) => c.trim().startsWith(`${name}=`));
}

const CROSS_SITE =
  "refused: this request came from a page of another site, and changes are accepted only from the appliance's own pages. Behind a reverse proxy that rewrites the Host header, set SVC_TRUST_PROXY or SVC_BASE_URL.";

export function registerBrowserDefences(app: App, opts: BrowserDefenceOptions = {}): void {
  const publicHost = opts.publicUrl ? hostOf(opts.publicUrl) : null;

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    // On the raw response, so replies that write it themselves (query streams) carry them too.
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.raw.setHeader(name, value);

    if (SAFE_METHODS.has(req.method) || presentsOwnCredential(req)) return;
    const site = req.headers['sec-fetch-site'];
    if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
      throw new HttpError(403, `Cross-site request ${CROSS_SITE}`);
    }
    const origin = req.headers.origin;
    if (typeof origin === 'string') {
      const from = origin === 'null' ? null : hostOf(origin);
      const own = hostOf(req.host, req.protocol);
      if (from === null || (from !== own && from !== publicHost)) {
        throw new HttpError(403, `Request from origin ${origin} ${CROSS_SITE}`);
      }
    }
    if (opts.sessionCookie && site !== 'same-origin' && hasCookie(req, opts.sessionCookie)) {
      const type = req.headers['content-type'];
      if (typeof type === 'string' && SIMPLE_BODY_TYPES.test(type)) {
        throw new HttpError(
          415,
          `Content type "${type.split(';')[0]!.trim()}" is not accepted from a signed-in browser; send application/json (CSV imports: text/csv).`,
        );
      }
    }
  });
}
