// A Go text/template compatible template engine for alert payloads and e-mails (interface-spec
// "Webhook custom payloads"): compile once (a syntax error names its line and column), render
// many times against the firing's data with the output capped.
// Why our own: the npm candidates were not faithful enough to accept users' Go templates unchanged
// (@ctrl/golang-template documents a subset: fields, if/else, range, index, join; go-text-template
// 0.2.2 calls itself basic; @mdfriday/text-template is a young port inside a site generator, little
// used). This one is tested against the examples of Go's text/template documentation.
import { TemplateError, TemplateExecError, type Source } from './errors.ts';
import { execute, RenderLimitError } from './exec.ts';
import { FUNCS, type TemplateFunc } from './funcs.ts';
import { parseTemplate, type ParsedTemplate } from './parser.ts';

export { GoStruct } from './values.ts';
export { TemplateError, TemplateExecError, RenderLimitError, type TemplateFunc };

/** The spec's cap on a rendered webhook body. */
export const MAX_RENDERED_BYTES = 8 * 1024 * 1024;
/** Nodes and loop iterations one render may take: far beyond any payload, short of a hang. */
const MAX_STEPS = 5_000_000;
/** Wall time one render may take on the service's thread; real payloads render in well under 1 ms. */
export const MAX_RENDER_MS = 500;

export class Template {
  private constructor(
    private readonly parsed: ParsedTemplate,
    private readonly funcs: Record<string, TemplateFunc>,
  ) {}

  /**
   * Parses `text`; throws TemplateError (with line and column) when it does not compile. `funcs`
   * adds or replaces functions, as Go's Template.Funcs does (tests run Go's own examples with it).
   */
  static compile(text: string, name = 'body', funcs: Record<string, TemplateFunc> = {}): Template {
    const src: Source = { name, text };
    const all = { ...FUNCS, ...funcs };
    return new Template(parseTemplate(src, new Set(Object.keys(all))), all);
  }

  /**
   * Renders against `data`. Throws TemplateExecError when the template fails on this data, and
   * RenderLimitError past `maxBytes` (UTF-8), the step budget or the time budget (`now` is the
   * clock it reads, for tests).
   */
  render(data: unknown, maxBytes = MAX_RENDERED_BYTES, now?: () => number): string {
    const out = execute(this.parsed, data, { maxChars: maxBytes, maxSteps: MAX_STEPS, maxMs: MAX_RENDER_MS, now }, this.funcs);
    if (Buffer.byteLength(out, 'utf8') > maxBytes) throw new RenderLimitError(`the rendered output exceeds ${maxBytes.toLocaleString('en-US')} bytes`);
    return out;
  }
}
