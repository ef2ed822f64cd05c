// What the reader hands out: records, warnings about what it could not read, the file header.
import type { EventJsonObject } from './event-json.ts';

/** One event record. */
export interface EvtxRecord {
  /** The record's EventRecordID (from the record header). */
  recordId: number;
  /** When the record was written (record header), ISO 8601 UTC with 100 ns precision: `2019-04-27T15:57:25.8688645Z`. */
  timestamp: string;
  /** The event in evtx_dump's JSON shape: `{"Event": {"#attributes": …, "System": …, "EventData": …}}`. */
  event: EventJsonObject;
  /** Index of its chunk in the file (0 = the chunk right after the file header). */
  chunk: number;
  /** Offset of the record in the file, in bytes. */
  offset: number;
}

/** Something the reader skipped or distrusts, in a sentence that names it and where it is. */
export interface EvtxWarning {
  /** File offset (bytes) of what the warning is about. */
  offset: number;
  /** Chunk index, when the warning concerns a chunk or one of its records. */
  chunk?: number;
  /** The record's id, when the warning concerns one record. */
  recordId?: number;
  message: string;
}

/** The file header's fields (MS-EVEN6 2.2.1 / libevtx "file header"). */
export interface EvtxFileHeader {
  firstChunk: number;
  lastChunk: number;
  nextRecordId: number;
  majorVersion: number;
  minorVersion: number;
  chunkCount: number;
  /** The log was not closed cleanly: the header may lag behind the chunks. */
  dirty: boolean;
  /** The log reached its maximum size. */
  full: boolean;
  /** The stored header checksum matched. */
  checksumOk: boolean;
}

/** Counters of a read, updated as it goes (progress for long files). */
export interface EvtxStats {
  /** Bytes consumed from the source so far. */
  bytesRead: number;
  /** Chunks with a chunk signature (64 KiB each). */
  chunks: number;
  /** All-zero chunks: allocated but never written, skipped without a warning. */
  emptyChunks: number;
  /** Records handed out. */
  records: number;
  /** Records (or record-sized stretches) skipped because they could not be read. */
  skippedRecords: number;
}
