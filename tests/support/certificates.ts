// Self-signed certificates for the TLS tests (syslog listeners, SMTP), made by the system's openssl
// so the servers under test hold a real key pair, as an admin's would.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A self-signed certificate for CN=`name` (valid 2 days), with an IP subjectAltName when given. */
export function selfSignedCert(name = 'localhost', ip?: string): { cert: string; key: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-cert-'));
  const keyPath = path.join(dir, 'key.pem');
  const certPath = path.join(dir, 'cert.pem');
  try {
    const san = ip ? ['-addext', `subjectAltName=IP:${ip}`] : [];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, ...san, '-keyout', keyPath, '-out', certPath], { stdio: 'ignore' });
    return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
