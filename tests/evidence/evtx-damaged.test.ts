// The .evtx reader on damaged files, made by corrupting a real recording of the shared sample set
// (Lateral Movement/LM_5145_Remote_FileCopy.evtx: 10 chunks of Security events): bad signatures,
// bad checksums, a broken record, a chunk cut in half, a truncated file. What is readable comes
// out (checked against the undamaged file's records), and the warnings name what was skipped.
// Also: the same records whatever the pieces the bytes arrive in, and bounded memory on a large file.
import assert from 'node:assert/strict';
import { closeSync, createReadStream, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { crc32, crc32ByTable } from '../../service/src/evidence/evtx/crc32.ts';
import { EvtxDecoder, EvtxFormatError, readEvtx, type EvtxRecord, type EvtxWarning } from '../../service/src/evidence/evtx/index.ts';
import { unpackEvtxSamples, type EvtxSamples } from '../support/evtx-samples.ts';

const SAMPLE = 'Lateral Movement/LM_5145_Remote_FileCopy.evtx';
const HEADER = 4096;
const CHUNK = 65536;

async function read(source: Parameters<typeof readEvtx>[0]): Promise<{ records: EvtxRecord[]; warnings: readonly EvtxWarning[] }> {
  const reading = readEvtx(source);
  const records: EvtxRecord[] = [];
  for await (const r of reading) records.push(r);
  return { records, warnings: reading.warnings };
}

const ids = (rs: EvtxRecord[]) => rs.map((r) => r.recordId);
const chunkStart = (k: number) => HEADER + k * CHUNK;
const u32 = (b: Buffer, o: number) => b.readUInt32LE(o);

describe('evtx reader on damaged files', () => {
  let samples: EvtxSamples;
  let pristine: Buffer;
  let intact: EvtxRecord[];
  before(async () => {
    samples = unpackEvtxSamples();
    pristine = readFileSync(path.join(samples.dir, 'evtx-attack-samples', SAMPLE));
    const r = await read(pristine);
    intact = r.records;
    assert.deepEqual(r.warnings, []);
    assert.ok(intact.length > 800 && new Set(intact.map((x) => x.chunk)).size === 10, 'the sample has 10 chunks of records');
  });
  after(() => samples?.remove());
  const copy = () => Buffer.from(pristine);
  /** The intact records minus those of `chunks`. */
  const without = (...chunks: number[]) => intact.filter((r) => !chunks.includes(r.chunk));
  const messages = (ws: readonly EvtxWarning[]) => ws.map((w) => w.message);

  it('checks the CRC32 it uses against a table-driven one', () => {
    for (const data of [Buffer.alloc(0), Buffer.from('123456789'), pristine.subarray(0, 120), pristine.subarray(HEADER + 512, HEADER + 9000)]) {
      assert.equal(crc32(data), crc32ByTable(data));
    }
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926); // the CRC-32 check value
    assert.equal(crc32(Buffer.from('456789'), crc32(Buffer.from('123'))), 0xcbf43926);
  });

  it('reads every record when the file header signature is wrong, and says so', async () => {
    const b = copy();
    b.write('XXXXXXXX', 0, 'latin1');
    const { records, warnings } = await read(b);
    assert.deepEqual(ids(records), ids(intact));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.message, /^file header: the signature is not "ElfFile" \(found "XXXXXXXX"\); its fields are not trusted and the chunks are read anyway$/);
  });

  it('refuses bytes that are no event log at all', async () => {
    await assert.rejects(read(Buffer.from('{"not":"an evtx file"}\n'.repeat(10_000))), (e: Error) => e instanceof EvtxFormatError && /not a Windows event log/.test(e.message));
    await assert.rejects(read(Buffer.from('tiny')), EvtxFormatError);
    await assert.rejects(read(Buffer.alloc(0)), EvtxFormatError);
  });

  it('reads every record despite a bad file header checksum', async () => {
    const b = copy();
    b[100] ^= 0xff; // a reserved byte inside the checksummed range
    const { records, warnings } = await read(b);
    assert.deepEqual(ids(records), ids(intact));
    assert.deepEqual(messages(warnings), [
      `file header: checksum mismatch (stored 0x${u32(b, 124).toString(16).padStart(8, '0')}, computed 0x${crc32(b.subarray(0, 120)).toString(16).padStart(8, '0')}); its fields are not trusted and the chunks are read anyway`,
    ]);
  });

  it('reads every record of a chunk whose header checksum is wrong, naming the chunk', async () => {
    const b = copy();
    b[chunkStart(3) + 80] ^= 0x01; // reserved bytes of chunk 3's header
    const { records, warnings } = await read(b);
    assert.deepEqual(ids(records), ids(intact));
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.chunk, 3);
    assert.equal(warnings[0]!.offset, chunkStart(3));
    assert.match(warnings[0]!.message, /^chunk 3 \(file offset 200704\): header checksum mismatch \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\); its records are read anyway$/);
  });

  it('skips a record whose binary XML is broken, keeps the rest of its chunk, and names the record', async () => {
    const b = copy();
    const victim = intact.find((r) => r.chunk === 5 && r !== intact.find((x) => x.chunk === 5))!; // not the chunk's first
    b[victim.offset + 24] = 0xee; // the record's first token
    const { records, warnings } = await read(b);
    assert.deepEqual(ids(records), ids(intact.filter((r) => r !== victim)));
    assert.deepEqual(records, intact.filter((r) => r !== victim));
    assert.deepEqual(
      warnings.map((w) => [w.chunk, w.recordId]),
      [[5, undefined], [5, victim.recordId]],
    );
    assert.match(warnings[0]!.message, /^chunk 5 \(file offset \d+\): event records checksum mismatch \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\); each record is checked on its own and the damaged ones are skipped$/);
    assert.equal(
      warnings[1]!.message,
      `chunk 5 (file offset ${chunkStart(5)}): record ${victim.recordId} at file offset ${victim.offset} cannot be decoded (unknown binary XML token 0xee at chunk offset ${victim.offset - chunkStart(5) + 24}); it is skipped`,
    );
  });

  it('skips a record whose header is broken and finds the next one', async () => {
    const b = copy();
    const inChunk = intact.filter((r) => r.chunk === 2);
    const victim = inChunk[4]!;
    b.writeUInt32LE(0x12345678, victim.offset); // its signature
    const { records, warnings } = await read(b);
    assert.deepEqual(ids(records), ids(intact.filter((r) => r !== victim)));
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!.message, /^chunk 2 .*event records checksum mismatch/);
    assert.equal(
      warnings[1]!.message,
      `chunk 2 (file offset ${chunkStart(2)}): ${inChunk[5]!.offset - victim.offset} bytes at file offset ${victim.offset} hold no valid record (record signature 0x12345678 instead of 0x00002a2a); reading resumes at file offset ${inChunk[5]!.offset}`,
    );
  });

  it('reads the first half of a chunk cut in half by the end of the file', async () => {
    const cut = chunkStart(7) + CHUNK / 2;
    const { records, warnings } = await read(pristine.subarray(0, cut));
    // Every record that ends before the cut.
    const expected = intact.filter((r) => r.chunk < 7 || (r.chunk === 7 && r.offset + u32(pristine, r.offset + 4) <= cut));
    assert.ok(expected.some((r) => r.chunk === 7) && intact.some((r) => r.chunk === 7 && !expected.includes(r)), 'the cut falls among chunk 7 records');
    assert.deepEqual(records, expected);
    const cutRecord = intact.find((r) => r.chunk === 7 && !expected.includes(r))!;
    assert.deepEqual(messages(warnings), [
      `chunk 7 (file offset ${chunkStart(7)}): the file ends ${CHUNK / 2} bytes into this chunk, before its last record (which ends at byte ${u32(pristine, chunkStart(7) + 48)}); the records before the cut are read, the rest are lost`,
      `chunk 7 (file offset ${chunkStart(7)}): ${cut - cutRecord.offset} bytes at file offset ${cutRecord.offset} hold no valid record (the record of ${u32(pristine, cutRecord.offset + 4)} bytes is cut off by the end of the file); no record follows them in this chunk`,
      `the file header counts 10 chunks but the file ends after 8; the file is truncated and the missing chunks are lost`,
    ]);
  });

  it('reads the chunks after a chunk whose second half is zeroed, naming what was lost', async () => {
    const b = copy();
    b.fill(0, chunkStart(4) + CHUNK / 2, chunkStart(5));
    const { records, warnings } = await read(b);
    const kept = records.filter((r) => r.chunk === 4);
    assert.ok(kept.length > 0 && kept.length < intact.filter((r) => r.chunk === 4).length);
    assert.deepEqual(records, [...intact.filter((r) => r.chunk < 4), ...kept, ...intact.filter((r) => r.chunk > 4)]);
    assert.deepEqual(kept, intact.filter((r) => r.chunk === 4).slice(0, kept.length));
    assert.ok(warnings.length >= 2 && warnings.every((w) => w.chunk === 4), JSON.stringify(warnings));
    assert.match(warnings[0]!.message, /event records checksum mismatch/);
    assert.match(warnings[1]!.message, /^chunk 4 \(file offset \d+\): \d+ bytes at file offset \d+ hold no valid record \(.*\); no record follows them in this chunk$/);
  });

  it('reads a chunk whose signature is damaged, and says so', async () => {
    const b = copy();
    b.write('ElfJunk\0', chunkStart(6), 'latin1');
    const { records, warnings } = await read(b);
    assert.deepEqual(ids(records), ids(intact));
    assert.deepEqual(messages(warnings), [`chunk 6 (file offset ${chunkStart(6)}): the signature is not "ElfChnk"; its records are read where they can be found`]);
  });

  it('says a file cut at a chunk boundary is truncated, and one cut inside its header holds nothing', async () => {
    const { records, warnings } = await read(pristine.subarray(0, chunkStart(3)));
    assert.deepEqual(records, without(3, 4, 5, 6, 7, 8, 9));
    assert.deepEqual(messages(warnings), ['the file header counts 10 chunks but the file ends after 3; the file is truncated and the missing chunks are lost']);
    const head = await read(pristine.subarray(0, 1000));
    assert.deepEqual(head.records, []);
    assert.deepEqual(messages(head.warnings), ['the file ends after 1000 bytes, inside its 4096-byte header; it holds no records']);
  });

  it('survives random corruption: only warnings, never an exception, and every intact chunk still read', async () => {
    let seed = 17;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let round = 0; round < 60; round++) {
      const b = copy();
      // Damage one chunk (header, tables and records alike); the other nine must read as before.
      const k = round % 10;
      for (let i = 0; i < 1 + (round % 40); i++) b[chunkStart(k) + Math.floor(random() * CHUNK)] = Math.floor(random() * 256);
      const { records, warnings } = await read(b);
      assert.deepEqual(records.filter((r) => r.chunk !== k), without(k), `round ${round}: the undamaged chunks`);
      assert.ok(warnings.every((w) => w.chunk === k), `round ${round}: warnings name chunk ${k}`);
    }
  });

  it('gives the same records whatever pieces the bytes arrive in', async () => {
    const sizes = [1, 7, 4095, 4097, 65535, 65537, 100_000];
    const pieces: Buffer[] = [];
    for (let o = 0, i = 0; o < pristine.length; i++) {
      const n = sizes[i % sizes.length]!;
      pieces.push(pristine.subarray(o, o + n));
      o += n;
    }
    assert.deepEqual((await read(pieces)).records, intact);
    const file = path.join(samples.dir, 'copy.evtx');
    writeFileSync(file, pristine);
    assert.deepEqual((await read(file)).records, intact);
    assert.deepEqual((await read(createReadStream(file, { highWaterMark: 3000 }))).records, intact);
    // The push decoder by hand: records come out as their chunk completes.
    const decoder = new EvtxDecoder();
    const firstPush = decoder.push(pristine.subarray(0, chunkStart(1) + 10));
    assert.deepEqual(ids(firstPush), ids(intact.filter((r) => r.chunk === 0)));
    assert.deepEqual(ids([...firstPush, ...decoder.push(pristine.subarray(chunkStart(1) + 10)), ...decoder.end()]), ids(intact));
    assert.equal(decoder.stats.bytesRead, pristine.length);
  });

  it('reads a large file in bounded memory', async (t) => {
    // 240 copies of the sample's 10 chunks after one file header: 157 MB of valid chunks.
    const file = path.join(samples.dir, 'large.evtx');
    const chunks = pristine.subarray(HEADER, chunkStart(10));
    const copies = 240;
    const fd = openSync(file, 'w');
    writeSync(fd, pristine.subarray(0, HEADER));
    for (let i = 0; i < copies; i++) writeSync(fd, chunks);
    closeSync(fd);
    const size = HEADER + copies * chunks.length;
    // Live memory after a full collection, every 50,000 records: what the reader holds on to.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const live = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    // Measured from the first sample on, once the reader's code is compiled and its buffers made:
    // what is held then grows only if records or bytes are kept (a reader that kept them would
    // hold hundreds of MB here). The first sample's own size varies with the machine's load.
    let start = -1;
    let peak = 0;
    let n = 0;
    const reading = readEvtx(file);
    for await (const r of reading) {
      if (++n % 50_000 === 0) {
        if (start < 0) start = live();
        else peak = Math.max(peak, live() - start);
      }
      assert.ok(r.recordId > 0);
    }
    assert.equal(n, intact.length * copies);
    assert.equal(reading.stats.bytesRead, size);
    t.diagnostic(`live memory grew by at most ${(peak / 1e6).toFixed(1)} MB while reading ${(size / 1e6).toFixed(0)} MB`);
    assert.ok(peak < 32e6, `the reader held ${(peak / 1e6).toFixed(0)} MB while reading ${(size / 1e6).toFixed(0)} MB`);
  });
});
