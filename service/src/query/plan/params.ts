// Every user value reaches ClickHouse as a bound query parameter, never as SQL text: the planner
// asks `bind` for a placeholder and the executor sends the collected values with the statement.

export type ParamType =
  | 'UUID'
  | 'String'
  | 'Float64'
  | 'Int64'
  | 'UInt32'
  | 'UInt64'
  | 'Array(String)'
  | 'Array(UUID)'
  | 'Array(UInt32)'
  | "DateTime64(9, 'UTC')";

export class Params {
  readonly values: Record<string, unknown> = {};
  private next = 0;

  bind(value: unknown, type: ParamType): string {
    const name = `p${this.next++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }

  text(value: string): string {
    return this.bind(value, 'String');
  }

  number(value: number): string {
    return this.bind(value, 'Float64');
  }
}
