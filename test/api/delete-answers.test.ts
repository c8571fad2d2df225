import test from 'ava';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

type OpenApi = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>
  >;
  components: { schemas: Record<string, Schema> };
};
type Schema = { $ref?: string; required?: string[] };

test("every DELETE answers the reference's {statusCode: 200, message}, the message naming what it deleted by id, where products and withdrawal addresses named no id and API keys answered {success} alone", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const made = async (path: string, body: object) => {
    const answer = await api.post<{ id: string }>(path, body);
    t.is(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
    return answer.body.id;
  };
  const deleted = [
    ['product', '/api/v1/products', await made('/api/v1/products', { name: 'Tea' })],
    [
      'payment link',
      '/api/v1/payment-links',
      await made('/api/v1/payment-links', { title: 'Tea', amount: '100000000', currency: 'usdc' }),
    ],
    ['customer', '/api/v1/customers', await made('/api/v1/customers', { email: 'pat@example.com' })],
    [
      'webhook endpoint',
      '/api/v1/webhook-endpoints',
      await made('/api/v1/webhook-endpoints', {
        description: 'backend',
        url: 'https://shop.example/hooks',
        enabledEvents: { events: ['checkout_session.completed'] },
      }),
    ],
    [
      'withdrawal address',
      '/api/v1/organization/withdrawal-addresses',
      await made('/api/v1/organization/withdrawal-addresses', {
        chainId: 7357,
        address: `0x${'ab'.repeat(20)}`,
        name: 'spare',
      }),
    ],
  ] as const;
  for (const [what, path, id] of deleted)
    t.deepEqual((await api.delete(`${path}/${id}`)).body, { statusCode: 200, message: `${what} ${id} deleted` }, what);
  // Weir's document promised API keys `success`: it stays, beside the reference's shape.
  const key = await made('/api/v1/api-keys', { name: 'temporary' });
  t.deepEqual((await api.delete(`/api/v1/api-keys/${key}`)).body, {
    statusCode: 200,
    message: `API key ${key} deleted`,
    success: true,
  });

  // The document says so of every DELETE.
  const doc = (await api.get<OpenApi>('/api/v1/openapi.json')).body;
  const resolved = (schema: Schema) =>
    schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema;
  for (const [path, operations] of Object.entries(doc.paths)) {
    const remove = operations.delete;
    if (!remove) continue;
    const schema = remove.responses['200']?.content?.['application/json']?.schema;
    t.truthy(schema, `DELETE ${path} documents its answer`);
    if (schema) t.like(resolved(schema).required?.slice().sort(), ['message', 'statusCode'], `DELETE ${path}`);
  }
});
