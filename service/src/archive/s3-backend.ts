// The archive in S3-compatible object storage (MinIO, Ceph, Garage, AWS): path-style requests
// signed with AWS Signature Version 4 (UNSIGNED-PAYLOAD is not used: the payload's hash is signed).
// A PUT that answered 200 is durable by the store's contract.
import { createHash, createHmac } from 'node:crypto';
import { keysGlob, sqlString, type ArchiveBackend } from './backend.ts';

export interface S3Options {
  endpoint: string;
  bucket: string;
  prefix: string;
  region: string;
  accessKey: string;
  secretKey: string;
}

const sha256hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();
/** RFC 3986 encoding as SigV4 wants it (slashes kept in paths). */
const enc = (s: string, keepSlash = false) => {
  const e = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? e.replace(/%2F/g, '/') : e;
};

export class S3Backend implements ArchiveBackend {
  readonly kind = 's3' as const;
  private readonly endpoint: string;
  private readonly prefix: string;

  constructor(private readonly o: S3Options) {
    this.endpoint = o.endpoint.replace(/\/+$/, '');
    this.prefix = o.prefix.replace(/^\/+|\/+$/g, '');
  }

  location(fractalId: string): string {
    return `s3://${this.o.bucket}/${this.objectKey(fractalId)}`;
  }

  async put(key: string, data: Buffer): Promise<void> {
    await this.request('PUT', this.objectKey(key), {}, data);
  }

  async get(key: string): Promise<Buffer> {
    return this.request('GET', this.objectKey(key), {});
  }

  async delete(key: string): Promise<void> {
    await this.request('DELETE', this.objectKey(key), {}, undefined, [200, 204, 404]);
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | null = null;
    const strip = this.prefix ? this.prefix.length + 1 : 0;
    do {
      const q: Record<string, string> = { 'list-type': '2', prefix: this.objectKey(prefix) };
      if (token) q['continuation-token'] = token;
      const xml = (await this.request('GET', '', q)).toString('utf8');
      for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(unxml(m[1]!).slice(strip));
      token = /<IsTruncated>true<\/IsTruncated>/.test(xml) ? (/<NextContinuationToken>([^<]*)</.exec(xml)?.[1] ?? null) : null;
      if (token) token = unxml(token);
    } while (token);
    return keys.sort();
  }

  async check(): Promise<void> {
    const probe = `.svc-archive-check`;
    try {
      await this.put(probe, Buffer.from('ok'));
      await this.delete(probe);
    } catch (err) {
      throw new Error(`The S3 bucket ${this.o.bucket} at ${this.endpoint} cannot be written: ${(err as Error).message}.`);
    }
  }

  engineSource(keys: string[], structure: string): string {
    const url = `${this.endpoint}/${this.o.bucket}/${keysGlob(keys.map((k) => this.objectKey(k)))}`;
    return `s3(${sqlString(url)}, ${sqlString(this.o.accessKey)}, ${sqlString(this.o.secretKey)}, 'Parquet', ${sqlString(structure)})`;
  }

  redact(sql: string): string {
    return this.o.secretKey ? sql.split(sqlString(this.o.secretKey)).join("'[secret]'") : sql;
  }

  private objectKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  private async request(method: string, key: string, query: Record<string, string>, body?: Buffer, okStatus = [200]): Promise<Buffer> {
    const url = new URL(this.endpoint);
    const canonicalPath = `/${enc(this.o.bucket)}${key ? `/${enc(key, true)}` : ''}`;
    const canonicalQuery = Object.keys(query)
      .sort()
      .map((k) => `${enc(k)}=${enc(query[k]!)}`)
      .join('&');
    const now = new Date();
    const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    const day = amzDate.slice(0, 8);
    const payloadHash = sha256hex(body ?? '');
    const headers: Record<string, string> = { host: url.host, 'x-amz-content-sha256': payloadHash, 'x-amz-date': amzDate };
    const signed = Object.keys(headers).sort();
    const canonical = [method, canonicalPath, canonicalQuery, signed.map((h) => `${h}:${headers[h]}\n`).join(''), signed.join(';'), payloadHash].join('\n');
    const scope = `${day}/${this.o.region}/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(canonical)].join('\n');
    const kSigning = hmac(hmac(hmac(hmac(`AWS4${this.o.secretKey}`, day), this.o.region), 's3'), 'aws4_request');
    const signature = createHmac('sha256', kSigning).update(toSign).digest('hex');
    const authorization = `AWS4-HMAC-SHA256 Credential=${this.o.accessKey}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`;
    let res: Response;
    try {
      res = await fetch(`${this.endpoint}${canonicalPath}${canonicalQuery ? `?${canonicalQuery}` : ''}`, {
        method,
        headers: { ...headers, authorization, ...(body ? { 'content-length': String(body.length) } : {}) },
        body: body ? (new Uint8Array(body) as unknown as BodyInit) : undefined,
        signal: AbortSignal.timeout(120_000),
      });
    } catch (err) {
      throw new Error(`${this.endpoint} cannot be reached (${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}); check s3_endpoint and the network`);
    }
    const out = Buffer.from(await res.arrayBuffer());
    if (!okStatus.includes(res.status)) {
      const code = /<Code>([^<]*)<\/Code>/.exec(out.toString('utf8'))?.[1] ?? `HTTP ${res.status}`;
      const hint =
        code === 'NoSuchBucket'
          ? `the bucket ${this.o.bucket} does not exist; create it or correct s3_bucket`
          : code === 'InvalidAccessKeyId' || code === 'SignatureDoesNotMatch' || code === 'AccessDenied'
            ? `the store refused the credentials (${code}); check s3_access_key, s3_secret_key and s3_region`
            : `${method} ${key || '/'} answered ${code}`;
      throw new Error(hint);
    }
    return out;
  }
}

const unxml = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
