import { context, type Attributes, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';

/**
 * Traces (OpenTelemetry), off unless asked for: a span per HTTP request and child spans for what
 * it does (commands, appends), webhook attempts, follower batches and sweeps. Components take a
 * `Tracer`; the default is the API's no-op one, which records nothing and costs next to nothing.
 */
export const noTracer: Tracer = trace.getTracer('weir-noop');

export type Tracing = {
  tracer: Tracer;
  /** Sends what is buffered and stops exporting. */
  shutdown(): Promise<void>;
};

let contextManager: AsyncLocalStorageContextManager | null = null;

/**
 * A tracer exporting OTLP/HTTP to `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT: `/v1/traces` is appended),
 * in batches; or to `exporter` span by span (tests). Null when neither is given: tracing is off.
 * The active span follows async calls (AsyncLocalStorage, installed once per process).
 */
export async function openTracing(options: {
  endpoint?: string;
  exporter?: SpanExporter;
  serviceName?: string;
  version?: string;
}): Promise<Tracing | null> {
  const endpoint = options.endpoint?.trim();
  if (!endpoint && !options.exporter) return null;
  // The SDK and its exporter load only when tracing is on: a server without it starts without them.
  const [{ AsyncLocalStorageContextManager }, { OTLPTraceExporter }, { resourceFromAttributes }, sdk, conventions] =
    await Promise.all([
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  const { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor } = sdk;
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = conventions;
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint!.replace(/\/+$/, '')}/v1/traces` }));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: options.serviceName ?? 'weir',
      ...(options.version ? { [ATTR_SERVICE_VERSION]: options.version } : {}),
    }),
    spanProcessors: [processor],
  });
  return { tracer: provider.getTracer('weir', options.version), shutdown: () => provider.shutdown() };
}

/** Runs `work` in a span (a child of the active one), ended when it settles; an error marks it failed. */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes, kind }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}
