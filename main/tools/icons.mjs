// Draws the app and tray icons and encodes them as PNG with only node:zlib, so no binary
// image has to live in the repository. Called by scripts/build-main.mjs.
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 as PNG chunks need it (zlib.crc32 is missing from older Node 20 releases). */
export function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** @param {number} width @param {number} height @param {Uint8Array} rgba width*height*4 bytes */
export function encodePng(width, height, rgba) {
  if (rgba.length !== width * height * 4) throw new Error('rgba length does not match size');
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type RGBA
  // 10..12: compression, filter, interlace = 0
  const raw = Buffer.alloc(height * (width * 4 + 1)); // each row: filter byte 0 + pixels
  for (let y = 0; y < height; y++) {
    Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (width * 4 + 1) + 1);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * The mark: a blue rounded square with three white "log lines". Coverage is
 * supersampled 4x4 per pixel so the small tray sizes stay smooth.
 * @param {number} size edge in pixels
 */
export function drawIcon(size) {
  const rgba = new Uint8Array(size * size * 4);
  const r = 0.22; // corner radius, fraction of the edge
  const inSquare = (x, y) => {
    const dx = Math.max(r - x, 0, x - (1 - r));
    const dy = Math.max(r - y, 0, y - (1 - r));
    return dx * dx + dy * dy <= r * r;
  };
  const bars = [
    [0.3, 0.78],
    [0.5, 0.62],
    [0.7, 0.7],
  ]; // [centre y, right end]; all start at x = 0.22
  const inBar = (x, y) => bars.some(([cy, x1]) => Math.abs(y - cy) <= 0.06 && x >= 0.22 && x <= x1);
  const S = 4;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let cover = 0;
      let white = 0;
      for (let sy = 0; sy < S; sy++) {
        for (let sx = 0; sx < S; sx++) {
          const x = (px + (sx + 0.5) / S) / size;
          const y = (py + (sy + 0.5) / S) / size;
          if (!inSquare(x, y)) continue;
          cover++;
          if (inBar(x, y)) white++;
        }
      }
      const i = (py * size + px) * 4;
      if (cover === 0) continue; // transparent
      const w = white / cover;
      rgba[i] = Math.round(0x1f + (255 - 0x1f) * w);
      rgba[i + 1] = Math.round(0x6f + (255 - 0x6f) * w);
      rgba[i + 2] = Math.round(0xeb + (255 - 0xeb) * w);
      rgba[i + 3] = Math.round((255 * cover) / (S * S));
    }
  }
  return encodePng(size, size, rgba);
}

/** File name -> edge: tray@2x is picked by Electron on high-DPI screens; icon.png (512)
 *  is what electron-builder converts to .icns/.ico and the Linux icon set. */
export const ICONS = { 'tray.png': 16, 'tray@2x.png': 32, 'icon.png': 512 };
