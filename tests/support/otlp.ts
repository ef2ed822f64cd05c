// Log records made by the real OpenTelemetry JS SDK, for the OTLP tests: one rich record (trace
// context, scope attributes, a nested map, an int64 beyond 2^53) and a second one of the caller's.
import { ROOT_CONTEXT, trace, TraceFlags, type Attributes } from '@opentelemetry/api';
import { SeverityNumber, type LogRecord } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type ReadableLogRecord } from '@opentelemetry/sdk-logs';

/**
 * Beyond 2^53, yet a double whose shortest text is all its digits (the JSON exporter writes numbers
 * with JSON.stringify, so 2 ** 60 would go over the wire as 1152921504606847000).
 */
export const BIG = 2 ** 53 + 2;
export const BIG_TEXT = '9007199254740994';

export interface SdkRecordsOptions {
  /** Resource attributes, next to service.name "checkout" and host.name "web-1". */
  resource: Attributes;
  traceId: string;
  spanId: string;
  /** The rich record's time as [seconds, nanoseconds]. */
  time: [number, number];
  /** The second record, emitted as given (no span context). */
  second: LogRecord;
}

/** The rich record (logger app.payments 1.2.3, scope attribute team=payments), then `second`. */
export async function sdkRecords(o: SdkRecordsOptions): Promise<ReadableLogRecord[]> {
  const mem = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout', 'host.name': 'web-1', ...o.resource }),
    processors: [new SimpleLogRecordProcessor({ exporter: mem })],
  });
  const logger = provider.getLogger('app.payments', '1.2.3', { attributes: { team: 'payments' } });
  const context = trace.setSpanContext(ROOT_CONTEXT, { traceId: o.traceId, spanId: o.spanId, traceFlags: TraceFlags.SAMPLED });
  logger.emit({
    timestamp: o.time,
    severityNumber: SeverityNumber.ERROR,
    severityText: 'ERROR',
    body: 'payment failed',
    attributes: {
      'order.id': 'o-17',
      'order.total_micros': BIG,
      retry: 2,
      ratio: 0.25,
      ok: false,
      tags: ['a', 'b'],
      http: { request: { header: { 'x-req': 'abc' } }, status: 502 },
    },
    context,
  });
  logger.emit(o.second);
  await provider.forceFlush();
  const records = [...mem.getFinishedLogRecords()];
  await provider.shutdown();
  return records;
}
