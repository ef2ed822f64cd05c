// The .evtx reader's public entry: read records from a file, stream or buffers (readEvtx), or
// drive the decoder yourself (EvtxDecoder). README.md documents the output shape.
export { readEvtx, EvtxDecoder, EvtxFormatError, type EvtxSource, type EvtxReading, type EvtxReadOptions } from './reader.ts';
export type { EvtxRecord, EvtxWarning, EvtxFileHeader, EvtxStats } from './types.ts';
export type { EventJsonObject, EventJsonValue } from './event-json.ts';
