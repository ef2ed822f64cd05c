// The e-mail action through nodemailer with the appliance's SMTP settings (tls_mode none,
// starttls or tls). Subject and body are templates in the webhook's template language; left
// empty they are a short summary of the firing.
import nodemailer from 'nodemailer';
import type { FiringPayload } from '../executions-store.ts';
import { RenderLimitError, Template, TemplateError, TemplateExecError } from '../template/index.ts';
import type { Action, SmtpSettings } from './actions-store.ts';
import { alertLink, templateData } from './payload.ts';

export interface MailOutcome {
  ok: boolean;
  retryable: boolean;
  error: string;
  /** The server's answer, or what was rendered. */
  detail: string;
  duration_ms: number;
  subject?: string;
  body?: string;
}

const MAX_BODY = 2 * 1024 * 1024;

function defaultBody(p: FiringPayload, link: string | null): string {
  const lines = [
    `Alert: ${p.alert_name}`,
    `Severity: ${p.severity}`,
    `Matches: ${p.match_count}`,
    `Triggered: ${p.triggered_at}`,
    `Query: ${p.query_string}`,
    ...(link ? [`Open the matching logs: ${link}`] : []),
    '',
    ...p.results.slice(0, 20).map((r) => Object.entries(r).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join('  ')),
    ...(p.results.length > 20 ? [`… and ${p.results.length - 20} more`] : []),
  ];
  return lines.join('\n');
}

/** Subject and body of this firing (throws TemplateExecError / RenderLimitError when a template fails). */
export function renderEmail(a: Action<'email'>, p: FiringPayload, baseUrl: string | null): { subject: string; body: string } {
  const link = alertLink(baseUrl, p);
  const data = templateData(p, link);
  const subject = a.subject_template ? Template.compile(a.subject_template, 'subject_template').render(data, 10_000).replace(/[\r\n]+/g, ' ') : `[${p.severity}] ${p.alert_name}`;
  const body = a.body_template ? Template.compile(a.body_template, 'body_template').render(data, MAX_BODY) : defaultBody(p, link);
  return { subject, body };
}

/** Why nodemailer failed, in words that say which setting to look at. */
function smtpReason(err: unknown, s: SmtpSettings): string {
  const e = err as Error & { code?: string; response?: string };
  const said = `${e.response ?? e.message}${e.code ? ` (${e.code})` : ''}`;
  if (e.code === 'ETLS' && s.tls_mode === 'starttls') return `the server did not accept STARTTLS, which tls_mode starttls requires (tls_mode tls is for servers that speak TLS from the start, often port 465): ${said}`;
  if (e.code === 'EAUTH') return `the server refused the login of "${s.username}": ${said}`;
  if (/certificate|self[- ]signed|CERT_|unable to verify/i.test(e.message)) return `the server's TLS certificate is not trusted (start the appliance with NODE_EXTRA_CA_CERTS naming the CA that issued it): ${said}`;
  return said;
}

export function transportFor(s: SmtpSettings) {
  return nodemailer.createTransport({
    host: s.host,
    port: s.port,
    secure: s.tls_mode === 'tls',
    requireTLS: s.tls_mode === 'starttls',
    ignoreTLS: s.tls_mode === 'none',
    auth: s.username ? { user: s.username, pass: s.password } : undefined,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
}

export async function sendEmail(smtp: SmtpSettings | null, a: Action<'email'>, p: FiringPayload, baseUrl: string | null, to?: string[]): Promise<MailOutcome> {
  const t0 = performance.now();
  const ms = () => Math.round(performance.now() - t0);
  if (!smtp) return { ok: false, retryable: false, error: 'SMTP is not configured; an admin sets it in the SMTP settings.', detail: '', duration_ms: 0 };
  let mail: { subject: string; body: string };
  try {
    mail = renderEmail(a, p, baseUrl);
  } catch (err) {
    if (err instanceof TemplateExecError || err instanceof RenderLimitError || err instanceof TemplateError) {
      return { ok: false, retryable: false, error: `The e-mail template failed to render: ${err.message}`, detail: '', duration_ms: ms() };
    }
    throw err;
  }
  const transport = transportFor(smtp);
  try {
    const html = /^\s*</.test(mail.body);
    const info = await transport.sendMail({ from: smtp.from_address, to: to ?? a.recipients, subject: mail.subject, ...(html ? { html: mail.body } : { text: mail.body }) });
    const rejected = (info.rejected ?? []).map(String);
    if (rejected.length) return { ok: false, retryable: true, error: `the server refused ${rejected.join(', ')}`, detail: String(info.response ?? ''), duration_ms: ms(), ...mail };
    return { ok: true, retryable: false, error: '', detail: String(info.response ?? ''), duration_ms: ms(), ...mail };
  } catch (err) {
    return { ok: false, retryable: true, error: `sending failed: ${smtpReason(err, smtp)}`, detail: '', duration_ms: ms(), ...mail };
  } finally {
    transport.close();
  }
}
