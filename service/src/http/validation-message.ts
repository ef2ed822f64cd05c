// Turns a JSON-schema validation failure into one sentence that names the field.
interface AjvIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

export function validationSentence(issues: AjvIssue[], where: string | undefined): string {
  const e = issues[0];
  if (!e) return 'The request is invalid.';
  const part = where === 'querystring' ? 'query parameter' : where === 'params' ? 'path parameter' : 'field';
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') {
    const missing = String(e.params.missingProperty ?? '');
    const name = path ? `${path}.${missing}` : missing;
    return `The ${part} "${name}" is required.`;
  }
  if (!path && where === 'body' && e.keyword === 'type') {
    return `The request body must be a JSON ${String(e.params.type ?? 'object')}.`;
  }
  const name = path || '(body)';
  switch (e.keyword) {
    case 'type':
      return `The ${part} "${name}" must be ${article(String(e.params.type))}.`;
    case 'format':
      return `The ${part} "${name}" must be a valid ${formatName(String(e.params.format))}.`;
    case 'enum':
    case 'anyOf':
    case 'const':
      return `The ${part} "${name}" has an unsupported value${allowed(e.params)}.`;
    case 'minLength':
      return Number(e.params.limit) === 1
        ? `The ${part} "${name}" must not be empty.`
        : `The ${part} "${name}" must be at least ${e.params.limit} characters long.`;
    case 'maxLength':
      return `The ${part} "${name}" must be at most ${e.params.limit} characters long.`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `The ${part} "${name}" ${e.message ?? 'is out of range'}.`;
    case 'pattern':
      return `The ${part} "${name}" has an invalid format.`;
    case 'additionalProperties':
      return `The ${part} "${name}" has an unknown property "${String(e.params.additionalProperty)}".`;
    case 'maxItems':
      return `The ${part} "${name}" must have at most ${e.params.limit} items.`;
    case 'minItems':
      return `The ${part} "${name}" must have at least ${e.params.limit} item${Number(e.params.limit) === 1 ? '' : 's'}.`;
    default:
      return `The ${part} "${name}" ${e.message ?? 'is invalid'}.`;
  }
}

function article(type: string): string {
  const t = type.split(',')[0] ?? type;
  const a = /^[aeiou]/.test(t) ? 'an' : 'a';
  return t === 'null' ? 'null' : `${a} ${t}`;
}

function formatName(format: string): string {
  return format === 'uuid' ? 'UUID' : format === 'date-time' ? 'RFC 3339 date-time' : format;
}

function allowed(params: Record<string, unknown>): string {
  const values = params.allowedValues as unknown[] | undefined;
  return values ? ` (allowed: ${values.join(', ')})` : '';
}
