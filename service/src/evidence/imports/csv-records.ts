// CSV files with a header row: each later row becomes one record whose fields are named by the
// header. A row with more or fewer fields than the header is refused, naming its line, and the
// rest go on. The record's `raw` is the row as a JSON object (the header's names, the row's
// values): CSV has no text of a single record that stands on its own.
import { StringDecoder } from 'node:string_decoder';
import { CsvReader, type CsvRecord } from '../../shared/csv.ts';
import type { ImportRecord, RecordDecoder } from './formats.ts';

export class CsvDecoder implements RecordDecoder {
  readonly timestampFields: string[] = [];
  private readonly utf8 = new StringDecoder('utf8');
  private readonly reader = new CsvReader();
  private header: string[] | null = null;

  push(bytes: Buffer): ImportRecord[] {
    return this.records(this.reader.push(this.utf8.write(bytes)));
  }

  end(): ImportRecord[] {
    const tail = this.reader.push(this.utf8.end());
    return this.records(this.reader.end(tail));
  }

  takeWarnings(): string[] {
    return [];
  }

  private records(rows: CsvRecord[]): ImportRecord[] {
    const out: ImportRecord[] = [];
    for (const row of rows) {
      if (row.error !== undefined) {
        out.push({ error: row.error, located: true });
        continue;
      }
      if (!this.header) {
        this.header = row.fields.map((h, i) => h.trim() || `column_${i + 1}`);
        continue;
      }
      if (row.fields.length !== this.header.length) {
        out.push({ error: `CSV line ${row.line}: ${row.fields.length} field${row.fields.length === 1 ? '' : 's'} where the header row has ${this.header.length}`, located: true });
        continue;
      }
      const obj: Record<string, string> = {};
      for (let i = 0; i < row.fields.length; i++) obj[this.header[i]!] = row.fields[i]!;
      out.push({ text: JSON.stringify(obj) });
    }
    return out;
  }
}
