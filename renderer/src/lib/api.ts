// The fetch wrapper every call of the UI goes through (/api/v1/...): send() does the request, request()
// reads the usual answer, {success:true,data} or {success:false,error:"<sentence>"}; failures throw ApiError
// carrying that sentence and the HTTP status. A 401 also calls the registered handler, which shows sign-in.

const API_BASE = '/api/v1';

export class ApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
  /** false: a 401 is only thrown, not reported to the sign-in handler (used by the login form itself). */
  authRedirect?: boolean;
  /** The Accept header (JSON unless said otherwise; /query/stream answers server-sent events). */
  accept?: string;
  /** A body sent as it is with its own Content-Type (a CSV import), instead of `body` as JSON. */
  raw?: { type: string; data: string | Blob };
  /** More request headers (Last-Event-ID of a live stream, X-Live-Client of a notebook edit). */
  headers?: Record<string, string>;
  /** Let the request outlive the page (a presence "leaving" sent as the tab closes). */
  keepalive?: boolean;
}

let unauthorizedHandler: (() => void) | null = null;

/** Registers what happens when any request comes back 401 (the session shows the sign-in view). */
export function onUnauthorized(handler: () => void): void {
  unauthorizedHandler = handler;
}

/**
 * The one fetch of the UI: the body as JSON, the session cookie, an unreachable service as ApiError
 * (status 0; a cancelled request rethrows its AbortError), a 401 reported to the sign-in handler. Returns
 * the response unread: request() reads the envelope; the query endpoints, which answer a flat body or an
 * event stream, read theirs in lib/search/query-client.ts.
 */
export async function send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json', ...opts.headers };
  let body: string | Blob | undefined;
  if (opts.raw) {
    headers['Content-Type'] = opts.raw.type;
    body = opts.raw.data;
  } else if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(API_BASE + path, { method, headers, body, credentials: 'same-origin', signal: opts.signal, keepalive: opts.keepalive });
  } catch (err) {
    if (opts.signal?.aborted || (err instanceof DOMException && err.name === 'AbortError')) throw err;
    throw new ApiError('Could not reach the service. Check that it is running and the network is up.', 0);
  }
  if (res.status === 401 && opts.authRedirect !== false) unauthorizedHandler?.();
  return res;
}

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  return readEnvelope<T>(await send(method, path, opts));
}

/** The data of a response in the usual envelope; a refusal throws ApiError with the service's sentence. */
export async function readEnvelope<T>(res: Response): Promise<T> {
  if (res.status === 204) return undefined as T;

  let payload: unknown = undefined;
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('application/json')) {
    try {
      payload = await res.json();
    } catch {
      payload = undefined;
    }
  }
  const envelope = isEnvelope(payload) ? payload : null;

  if (!res.ok || !envelope || envelope.success !== true) {
    const sentence =
      envelope && typeof envelope.error === 'string' && envelope.error.trim() !== ''
        ? envelope.error
        : fallbackMessage(res.status, envelope !== null);
    throw new ApiError(sentence, res.status);
  }
  return envelope.data as T;
}

/**
 * POSTs `file` as the raw body (or a FormData as multipart/form-data, `contentType` null: the
 * browser writes the boundary) through XMLHttpRequest, which reports the upload's progress (fetch
 * does not): `onUpload` gets the share sent (0 … 1) and the bytes sent. Resolves with the
 * envelope's data; a refusal rejects with ApiError carrying the service's sentence, or `refused`
 * when it sent none.
 */
export function uploadFile<T>(path: string, file: Blob | FormData, contentType: string | null, onUpload: (share: number, sent: number) => void, refused: (status: number) => string): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', API_BASE + path);
    if (contentType !== null) xhr.setRequestHeader('Content-Type', contentType);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onUpload(e.loaded / e.total, e.loaded);
    };
    xhr.onerror = () => reject(new ApiError('Could not reach the service. Check that it is running and the network is up.', 0));
    xhr.onload = () => {
      let body: { data?: T; error?: string } = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not the envelope */
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.data) resolve(body.data);
      else reject(new ApiError(body.error ?? refused(xhr.status), xhr.status));
    };
    xhr.send(file);
  });
}

export const get = <T>(path: string, opts?: Omit<RequestOptions, 'body'>) => request<T>('GET', path, opts);
export const post = <T>(path: string, body?: unknown, opts?: Omit<RequestOptions, 'body'>) =>
  request<T>('POST', path, { ...opts, body });
export const put = <T>(path: string, body?: unknown, opts?: Omit<RequestOptions, 'body'>) =>
  request<T>('PUT', path, { ...opts, body });
export const del = <T>(path: string, opts?: Omit<RequestOptions, 'body'>) => request<T>('DELETE', path, opts);

interface Envelope {
  success: boolean;
  data?: unknown;
  error?: unknown;
}

function isEnvelope(v: unknown): v is Envelope {
  return typeof v === 'object' && v !== null && typeof (v as Envelope).success === 'boolean';
}

function fallbackMessage(status: number, hadEnvelope: boolean): string {
  if (status === 401) return 'You are not signed in.';
  if (status === 403) return 'Your account is not allowed to do that.';
  if (status === 404) return 'The service does not know this request (HTTP 404).';
  if (status >= 500) return `The service failed to answer (HTTP ${status}).`;
  if (!hadEnvelope) return `The service sent an unexpected response (HTTP ${status}).`;
  return `The request failed (HTTP ${status}).`;
}

/** The message to show for anything caught around an API call. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  return 'Something went wrong.';
}

// ---- Shapes of the endpoints this UI uses ----

/** Ids are compared with sameId(): the service may send them as strings or numbers. */
export type Id = string | number;

export function sameId(a: Id | null | undefined, b: Id | null | undefined): boolean {
  return a != null && b != null && String(a) === String(b);
}

export interface Selection {
  type: 'fractal' | 'prism';
  id: Id;
  name: string;
}

export interface Me {
  username: string;
  is_admin: boolean;
  selected: Selection | null;
}

export interface Fractal {
  id: Id;
  name: string;
  description?: string | null;
}

export interface Prism {
  id: Id;
  name: string;
  fractal_ids: Id[];
}

export interface FractalStats {
  log_count: number;
  size_bytes: number;
  oldest: string | number | null;
  newest: string | number | null;
}

export const enc = (id: Id): string => encodeURIComponent(String(id));

/** GET /fractals/{id}/stats: what one fractal holds (the overview's figures, the search's "all data" span). */
export const fractalStats = (id: Id) => get<FractalStats>(`/fractals/${enc(id)}/stats`);
