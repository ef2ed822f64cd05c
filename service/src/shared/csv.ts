// CSV as RFC 4180 writes it: comma-separated, fields optionally in double quotes (a quote inside
// doubled), records ending in CRLF or LF, a quoted field may span lines. A leading byte-order
// mark is dropped and blank lines are skipped. Errors name the line a person would look at.
// `CsvReader` takes the text in pieces (a file streamed through an import) and keeps going past a
// bad record; `parseCsv` takes a whole text and refuses it at its first bad record (dictionaries).

export class CsvError extends Error {}

export interface CsvRecord {
  fields: string[];
  /** The line the record starts on (1-based). */
  line: number;
  /** Why the record could not be read (its fields are then what was read before the fault). */
  error?: string;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

const enum State {
  FieldStart,
  Unquoted,
  Quoted,
  AfterQuote,
  /** A bad record: its text is skipped up to the end of its line. */
  Skipping,
}

export class CsvReader {
  private fields: string[] = [];
  private field = '';
  private state = State.FieldStart;
  private line = 1;
  private recordLine = 1;
  private fieldStartLine = 1;
  private sawQuote = false;
  private error: string | null = null;
  /** The last piece ended in CR: an LF first in the next piece belongs to it. */
  private afterCr = false;
  private first = true;

  /** The records this piece of text completes, in order. */
  push(text: string, out: CsvRecord[] = []): CsvRecord[] {
    let i = 0;
    const n = text.length;
    if (this.first && n > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    if (this.afterCr && i < n) {
      this.afterCr = false;
      if (text.charCodeAt(i) === LF) i++;
    }
    while (i < n) {
      switch (this.state) {
        case State.FieldStart:
        case State.Unquoted: {
          if (this.state === State.FieldStart && text.charCodeAt(i) === QUOTE) {
            this.state = State.Quoted;
            this.sawQuote = true;
            this.fieldStartLine = this.line;
            i++;
            break;
          }
          let j = i;
          let c = 0;
          while (j < n) {
            c = text.charCodeAt(j);
            if (c === COMMA || c === LF || c === CR || c === QUOTE) break;
            j++;
          }
          if (j > i) this.field += text.slice(i, j);
          this.state = State.Unquoted;
          i = j;
          if (j === n) break;
          if (c === QUOTE) {
            this.fail(`CSV line ${this.line}: a quote inside an unquoted field; put the whole field in double quotes and double the quote ("").`);
            i++;
          } else if (c === COMMA) {
            this.endField();
            i++;
          } else i = this.endLine(text, i, out);
          break;
        }
        case State.Quoted: {
          const q = text.indexOf('"', i);
          const to = q < 0 ? n : q;
          const piece = text.slice(i, to);
          if (piece.includes('\n')) for (let k = 0; k < piece.length; k++) if (piece.charCodeAt(k) === LF) this.line++;
          this.field += piece;
          i = to;
          if (q >= 0) {
            this.state = State.AfterQuote;
            i++;
          }
          break;
        }
        case State.AfterQuote: {
          const c = text.charCodeAt(i);
          if (c === QUOTE) {
            this.field += '"';
            this.state = State.Quoted;
            i++;
          } else if (c === COMMA) {
            this.endField();
            i++;
          } else if (c === LF || c === CR) i = this.endLine(text, i, out);
          else {
            this.fail(`CSV line ${this.line}: a quoted field must end at a comma or the end of the line, found ${JSON.stringify(text[i])} after the closing quote.`);
            i++;
          }
          break;
        }
        case State.Skipping: {
          let j = i;
          while (j < n && text.charCodeAt(j) !== LF && text.charCodeAt(j) !== CR) j++;
          i = j < n ? this.endLine(text, j, out) : n;
          break;
        }
      }
    }
    return out;
  }

  /** What the end of the text completes: the last record, or the error of a quoted field never closed. */
  end(out: CsvRecord[] = []): CsvRecord[] {
    if (this.state === State.Quoted) {
      this.fail(`CSV line ${this.fieldStartLine}: a quoted field is never closed.`);
      this.finishRecord(out);
    } else if (this.state === State.Skipping || this.field !== '' || this.fields.length > 0 || this.state === State.AfterQuote) {
      this.finishRecord(out);
    }
    return out;
  }

  private fail(error: string): void {
    this.error ??= error;
    this.state = State.Skipping;
  }

  /** Ends the record at the line break at i; returns the index after the break. */
  /** A comma: the field is complete, the next one starts. */
  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
    this.state = State.FieldStart;
  }

  private endLine(text: string, i: number, out: CsvRecord[]): number {
    this.finishRecord(out);
    this.line++;
    this.recordLine = this.line;
    if (text.charCodeAt(i) === CR) {
      if (i + 1 === text.length) {
        this.afterCr = true;
        return i + 1;
      }
      if (text.charCodeAt(i + 1) === LF) return i + 2;
    }
    return i + 1;
  }

  private finishRecord(out: CsvRecord[]): void {
    this.fields.push(this.field);
    // A blank line is no record (but a line holding only "" is one empty field).
    if (this.error !== null) out.push({ fields: this.fields, line: this.recordLine, error: this.error });
    else if (!(this.fields.length === 1 && this.fields[0] === '' && !this.sawQuote)) out.push({ fields: this.fields, line: this.recordLine });
    this.fields = [];
    this.field = '';
    this.state = State.FieldStart;
    this.sawQuote = false;
    this.error = null;
  }
}

/** The records of `text`, each an array of fields; the first bad record throws CsvError. */
export function parseCsv(text: string): string[][] {
  const reader = new CsvReader();
  const records = reader.end(reader.push(text));
  const bad = records.find((r) => r.error !== undefined);
  if (bad) throw new CsvError(bad.error);
  return records.map((r) => r.fields);
}

/** A cell's text as a spreadsheet will show it, not run it (the page's own export uses it too). */
export const spreadsheetSafe = (text: string): string => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);

/**
 * Writes records as CSV, quoting only the fields that need it. A cell a spreadsheet would run as a
 * formula (starting with =, +, -, @, tab or carriage return) gets a leading `'`, which spreadsheets
 * show as text (OWASP's advice on CSV injection); importing such an export keeps the `'`.
 */
export function formatCsv(records: string[][]): string {
  const cell = (raw: string) => {
    const v = spreadsheetSafe(raw);
    return /[",\r\n]/.test(v) || /^\s|\s$/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
  };
  return records.map((r) => r.map(cell).join(',')).join('\r\n') + (records.length ? '\r\n' : '');
}
