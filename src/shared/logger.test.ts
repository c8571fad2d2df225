import test from 'ava';
import { createLineLogger, redactSecrets } from './logger.ts';

test('secret fields at the top or one level down, a header API key and a request authorization are written as [redacted]', (t) => {
  const lines: string[] = [];
  const logger = createLineLogger((line) => lines.push(line)).child({ component: 'test', secret: 'bound' });
  const error = Object.assign(new Error('boom'), { apiKey: 'sk_test_x' });
  logger.info(
    {
      email: 'a@example.com',
      organizationId: 'org_1',
      customer: { email: 'b@example.com', name: 'kept' },
      headers: { 'x-api-key': 'key', accept: 'json' },
      req: { method: 'POST', headers: { authorization: 'Bearer sk', host: 'h' } },
      deep: { inner: { password: 'two levels down: not a path' } },
      list: [{ email: 'in an array: not a path' }],
      err: error,
    },
    'line',
  );
  const line = JSON.parse(lines[0]!) as Record<string, Record<string, unknown>>;
  t.is(line.email as unknown, '[redacted]');
  t.is(line.organizationId as unknown, 'org_1');
  t.deepEqual(line.customer, { email: '[redacted]', name: 'kept' });
  t.deepEqual(line.headers, { 'x-api-key': '[redacted]', accept: 'json' });
  t.deepEqual(line.req, { method: 'POST', headers: { authorization: '[redacted]', host: 'h' } });
  t.deepEqual(line.deep, { inner: { password: 'two levels down: not a path' } });
  t.is(line.secret as unknown, '[redacted]', 'a child logger bindings too');
  t.is(line.err!.apiKey, '[redacted]');
  t.is(line.err!.message, 'boom', 'an error stays an error');
  t.is(error.apiKey, 'sk_test_x', 'the logged object is not changed');
});

test('a line without secrets is passed on as it is, not copied', (t) => {
  const fields = { event: 'x', nested: { a: 1 } };
  t.is(redactSecrets(fields), fields);
});
