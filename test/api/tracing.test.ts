import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import test from 'ava';
import { inSpan, openTracing } from '../../src/shared/tracing.ts';
import { eventually } from '../support/api-client.ts';
import { ADMIN_TOKEN, startTestWeir } from '../support/weir-harness.ts';

test("a request's span is in the caller's trace (traceparent), named for its route with its status, and its command and append are its children", async (t) => {
  const exporter = new InMemorySpanExporter();
  const weir = await startTestWeir(t, {}, { spanExporter: exporter });
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const response = await fetch(`${weir.url}/admin/organizations`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      'content-type': 'application/json',
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    },
    body: JSON.stringify({ name: 'Traced Shop' }),
  });
  t.is(response.status, 200);
  const spans = exporter.getFinishedSpans();
  const request = spans.find((s) => s.name === 'POST /admin/organizations');
  t.truthy(request, spans.map((s) => s.name).join(', '));
  t.is(request!.spanContext().traceId, traceId);
  t.is(request!.parentSpanContext?.spanId, '00f067aa0ba902b7');
  t.is(request!.attributes['http.route'], '/admin/organizations');
  t.is(request!.attributes['http.response.status_code'], 200);
  const command = spans.find((s) => s.name === 'command organization');
  t.truthy(command);
  t.is(command!.spanContext().traceId, traceId);
  t.is(command!.parentSpanContext?.spanId, request!.spanContext().spanId);
  const append = spans.find(
    (s) => s.name === 'event-store append' && s.parentSpanContext?.spanId === command!.spanContext().spanId,
  );
  t.truthy(append, "the append is the command's child");
  t.is(append!.attributes['weir.stream_category'], 'organization');
  // The background work that follows the log traces each batch it handles: the projections' and each workflow's.
  const position = append!.attributes['weir.log_position'] ?? command!.attributes['weir.log_position'];
  const batchHolding = (name: string) =>
    exporter
      .getFinishedSpans()
      .find(
        (s) =>
          s.name === name &&
          BigInt(String(s.attributes['weir.log_position.last'])) >= BigInt(String(position)) &&
          Number(s.attributes['weir.events']) >= 1,
      );
  await eventually(async () => batchHolding('projections batch'), 'a projections batch span reaching the append');
  await eventually(async () => batchHolding('workflow invoice-session-closing batch'), "the workflow's batch span");

  // A 404 is a span too, named for the area, not the path.
  exporter.reset();
  await fetch(`${weir.url}/api/v1/checkout/sessions/nope`);
  const refused = exporter.getFinishedSpans().find((s) => s.kind === 1);
  t.truthy(refused);
  t.false(refused!.name.includes('nope'));
});

test('with OTEL_EXPORTER_OTLP_ENDPOINT, spans are exported over OTLP/HTTP to /v1/traces (a loopback receiver stands for the collector)', async (t) => {
  const received: { path: string; type: string; bytes: number }[] = [];
  const collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        type: req.headers['content-type'] ?? '',
        bytes: Buffer.concat(chunks).length,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  t.teardown(() => collector.close());
  const tracing = await openTracing({ endpoint: `http://127.0.0.1:${(collector.address() as AddressInfo).port}/` });
  t.truthy(tracing);
  await inSpan(tracing!.tracer, 'exported span', { 'weir.test': 'yes' }, async () => {});
  await tracing!.shutdown();
  t.is(received.length, 1);
  t.is(received[0]!.path, '/v1/traces');
  t.true(received[0]!.bytes > 0);
  t.is(await openTracing({ endpoint: '' }), null, 'off without an endpoint');
});
