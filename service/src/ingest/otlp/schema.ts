// The protobuf messages /v1/logs reads and writes, as a protobufjs JSON descriptor written for this
// service from the OTLP definitions (opentelemetry/proto: collector/logs/v1, logs/v1, common/v1,
// resource/v1) and google.rpc.Status. Only what the logs endpoint needs is declared; unknown
// fields on the wire (newer OTLP additions) are skipped by the decoder.
import protobuf from 'protobufjs';

const kv = (fields: Record<string, [type: string, id: number, rule?: 'repeated']>) => ({
  fields: Object.fromEntries(
    Object.entries(fields).map(([name, [type, id, rule]]) => [name, rule ? { rule, type, id } : { type, id }]),
  ),
});

const descriptor = {
  nested: {
    otlp: {
      nested: {
        // collector/logs/v1
        ExportLogsServiceRequest: kv({ resource_logs: ['ResourceLogs', 1, 'repeated'] }),
        ExportLogsServiceResponse: kv({ partial_success: ['ExportLogsPartialSuccess', 1] }),
        ExportLogsPartialSuccess: kv({ rejected_log_records: ['int64', 1], error_message: ['string', 2] }),
        // logs/v1
        ResourceLogs: kv({ resource: ['Resource', 1], scope_logs: ['ScopeLogs', 2, 'repeated'], schema_url: ['string', 3] }),
        ScopeLogs: kv({ scope: ['InstrumentationScope', 1], log_records: ['LogRecord', 2, 'repeated'], schema_url: ['string', 3] }),
        LogRecord: kv({
          time_unix_nano: ['fixed64', 1],
          severity_number: ['int32', 2], // the SeverityNumber enum; kept numeric
          severity_text: ['string', 3],
          body: ['AnyValue', 5],
          attributes: ['KeyValue', 6, 'repeated'],
          dropped_attributes_count: ['uint32', 7],
          flags: ['fixed32', 8],
          trace_id: ['bytes', 9],
          span_id: ['bytes', 10],
          observed_time_unix_nano: ['fixed64', 11],
          event_name: ['string', 12],
        }),
        // resource/v1 and common/v1
        Resource: kv({ attributes: ['KeyValue', 1, 'repeated'], dropped_attributes_count: ['uint32', 2] }),
        InstrumentationScope: kv({
          name: ['string', 1],
          version: ['string', 2],
          attributes: ['KeyValue', 3, 'repeated'],
          dropped_attributes_count: ['uint32', 4],
        }),
        AnyValue: {
          oneofs: { value: { oneof: ['string_value', 'bool_value', 'int_value', 'double_value', 'array_value', 'kvlist_value', 'bytes_value'] } },
          ...kv({
            string_value: ['string', 1],
            bool_value: ['bool', 2],
            int_value: ['int64', 3],
            double_value: ['double', 4],
            array_value: ['ArrayValue', 5],
            kvlist_value: ['KeyValueList', 6],
            bytes_value: ['bytes', 7],
          }),
        },
        ArrayValue: kv({ values: ['AnyValue', 1, 'repeated'] }),
        KeyValueList: kv({ values: ['KeyValue', 1, 'repeated'] }),
        KeyValue: kv({ key: ['string', 1], value: ['AnyValue', 2] }),
        // google/rpc/status.proto (details, a repeated google.protobuf.Any, is never sent here)
        Status: kv({ code: ['int32', 1], message: ['string', 2] }),
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);

export const ExportLogsServiceRequest = root.lookupType('otlp.ExportLogsServiceRequest');
export const ExportLogsServiceResponse = root.lookupType('otlp.ExportLogsServiceResponse');
export const RpcStatus = root.lookupType('otlp.Status');
