import Router from '@koa/router';
import test from 'ava';
import type { ApiState } from './api-context.ts';
import { createApiBridge, RawBody } from './api-bridge.ts';
import { bodyObject, requiredText } from './schema/fields.ts';
import { schemaRoutes } from './schema/route.ts';

const caller = {
  organizationId: 'org-1',
  environment: 'test',
  actor: 'user:u-1',
  clientAddress: '203.0.113.9',
} as const;

function bridge() {
  const router = new Router<ApiState>({ prefix: '/api/v1' });
  const api = schemaRoutes(router, { tag: 'Things', auth: 'secretKey' });
  api.route(
    { method: 'post', path: '/things', summary: 'Make a thing', body: bodyObject({ name: requiredText({ max: 10 }) }) },
    (ctx, { body }) => ({ name: body.name, tenant: ctx.state.tenant }),
  );
  api.route(
    { method: 'put', path: '/uploads', summary: 'Upload', bodyTypes: { 'multipart/form-data': bodyObject({}) } },
    (ctx) => ({ type: ctx.get('content-type'), bytes: ctx.state.multipart?.toString('latin1') ?? null }),
  );
  return createApiBridge([router]);
}

test('an in-process call runs the route with the caller as its tenant and actor', async (t) => {
  const answer = await bridge()(caller, 'POST', '/api/v1/things', { name: 'kettle' });
  t.is(answer.status, 200);
  t.deepEqual(answer.body, {
    name: 'kettle',
    tenant: {
      organizationId: 'org-1',
      environment: 'test',
      keyId: 'user:u-1',
      actor: 'user:u-1',
      clientAddress: '203.0.113.9',
    },
  });
});

test("bad input answers the API's own 400 naming the field", async (t) => {
  const answer = await bridge()<{ message: string; code: string }>(caller, 'POST', '/api/v1/things', { name: '' });
  t.is(answer.status, 400);
  t.is(answer.field, 'name');
  t.is(answer.body.message, 'name: must not be empty');
  t.is(answer.body.code, 'parameter_invalid_string_empty');
});

test('an unknown route is the API 404', async (t) => {
  const answer = await bridge()(caller, 'GET', '/api/v1/nothing');
  t.is(answer.status, 404);
});

test('a RawBody goes as is, with its own Content-Type (an upload form)', async (t) => {
  const body = new RawBody('multipart/form-data; boundary=b', Buffer.from('--b--\r\n'));
  const answer = await bridge()(caller, 'PUT', '/api/v1/uploads', body);
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.deepEqual(answer.body, { type: 'multipart/form-data; boundary=b', bytes: '--b--\r\n' });
});
