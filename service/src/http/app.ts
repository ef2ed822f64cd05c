// Builds the Fastify instance: envelope errors, validation sentences, cookies, the browser
// defences every route inherits (browser-defences.ts: security headers, cross-site refusal),
// a refused body read to its end so its sender sees the 413 (lingering-refusal.ts), unknown
// routes answered before their body is read. appliance.ts then adds access control and
// every domain's routes as a plugin. Nothing here knows about a particular domain's rules.
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { registerBrowserDefences, type BrowserDefenceOptions } from './browser-defences.ts';
import { HttpError, isUniqueViolation } from './errors.ts';
import { DEFAULT_LINGER, registerLingeringRefusal, type LingerOptions } from './lingering-refusal.ts';
import { validationSentence } from './validation-message.ts';

export type App = FastifyInstance<any, any, any, FastifyBaseLogger, TypeBoxTypeProvider>;

export function createHttpApp(opts: {
  logger: boolean | object;
  bodyLimit?: number;
  /** SVC_TRUST_PROXY: whose X-Forwarded-* headers give the client's address, scheme and host. */
  trustProxy?: boolean | string[];
  browser?: BrowserDefenceOptions;
  /** How much of a refused (413) body is still read and dropped so that its sender sees the answer. */
  linger?: LingerOptions;
}): App {
  const app = Fastify({
    logger: opts.logger as never,
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    trustProxy: opts.trustProxy ?? false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    // A malformed URL (bad percent-encoding) or an over-long path segment is answered by the
    // router itself, before any route or error handler: keep it in the error envelope too.
    frameworkErrors: (err, _req, reply) => {
      const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      const error = status === 414 ? 'A path segment of the URL is too long.' : 'The request URL is not valid; check its percent-encoding.';
      (reply as unknown as { code(n: number): { send(b: unknown): void } }).code(status).send({ success: false, error });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.register(cookie);
  registerBrowserDefences(app, opts.browser);
  registerLingeringRefusal(app, opts.linger ?? DEFAULT_LINGER);

  app.setErrorHandler((err: FastifyError & { validationContext?: string }, req, reply) => {
    if (err instanceof HttpError) {
      return reply.code(err.statusCode).headers(err.headers).send({ success: false, error: err.message, ...err.fields });
    }
    if (err.validation) {
      return reply.code(400).send({ success: false, error: validationSentence(err.validation as never, err.validationContext) });
    }
    if (isUniqueViolation(err)) {
      return reply.code(409).send({ success: false, error: 'A resource with that name already exists.' });
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ success: false, error: clientErrorSentence(err) });
    }
    req.log.error({ err }, 'request failed');
    return reply.code(500).send({ success: false, error: 'Internal error; the service log has the details.' });
  });

  const noRoute = (req: { method: string; url: string }) => `No route ${req.method} ${req.url.split('?')[0]}.`;
  // An unknown route is answered before its body is read: the not-found handler would otherwise
  // parse (buffer) a body for nobody, from anyone.
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.url === undefined) throw new HttpError(404, noRoute(req));
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ success: false, error: noRoute(req) });
  });
  return app;
}

function clientErrorSentence(err: FastifyError): string {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body is not valid JSON.';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is larger than this endpoint accepts.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `Unsupported content type; send application/json.`;
    default:
      return err.message.endsWith('.') ? err.message : `${err.message}.`;
  }
}
