// Errors of the template engine. Both kinds name the line and column (1-based, in characters of
// the template text) the way Go's text/template does, `template: body:3:14: …`, so the 400 at save
// and the execution record point at the spot.

/** A template's text and name, for positions in errors. */
export interface Source {
  name: string;
  text: string;
}

export function lineCol(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: [...text.slice(start, offset)].length + 1 };
}

/** A template that does not parse: refused when saved. */
export class TemplateError extends Error {
  readonly line: number;
  readonly column: number;
  constructor(
    src: Source,
    offset: number,
    readonly reason: string,
  ) {
    const { line, column } = lineCol(src.text, offset);
    super(`template: ${src.name}:${line}:${column}: ${reason}`);
    this.line = line;
    this.column = column;
  }
}

/** A template that fails while it renders (a missing field of a struct, a wrong argument…): recorded, not retried. */
export class TemplateExecError extends Error {
  constructor(
    src: Source,
    offset: number,
    readonly context: string,
    readonly reason: string,
  ) {
    const { line, column } = lineCol(src.text, offset);
    super(`template: ${src.name}:${line}:${column}: executing "${src.name}" at <${context}>: ${reason}`);
  }
}
