// CSV as RFC 4180 writes it: comma-separated, fields optionally in double quotes (a quote inside
// doubled), records ending in CRLF or LF, a quoted field may span lines. A leading byte-order
// mark is dropped and blank lines are skipped. Errors name the line a person would look at.

export class CsvError extends Error {}

/** The records of `text`, each an array of fields. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let fieldStartLine = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRecord = () => {
    record.push(field);
    // A blank line is no record (but a line holding only "" is one empty field).
    if (!(record.length === 1 && record[0] === '' && !quoted)) records.push(record);
    record = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new CsvError(`CSV line ${line}: a quoted field must end at a comma or the end of the line, found ${JSON.stringify(next)} after the closing quote.`);
        }
        continue;
      }
      if (c === '\n') line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field !== '') throw new CsvError(`CSV line ${line}: a quote inside an unquoted field; put the whole field in double quotes and double the quote ("").`);
      quoted = true;
      fieldStartLine = line;
      i++;
    } else if (c === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (c === '\r' || c === '\n') {
      endRecord();
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line++;
    } else {
      field += c;
      i++;
    }
  }
  if (quoted) throw new CsvError(`CSV line ${fieldStartLine}: a quoted field is never closed.`);
  if (field !== '' || record.length > 0) endRecord();
  return records;
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
