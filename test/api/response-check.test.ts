import test from 'ava';
import { checkWebhookBody, responseCheckFor } from '../support/response-check.ts';
import { startTestWeir } from '../support/weir-harness.ts';

test('an answer that does not match its route in the served document throws, naming the route', async (t) => {
  const weir = await startTestWeir(t);
  const check = await responseCheckFor(weir.url);
  if (!check) return t.fail('no document served');
  const json = 'application/json; charset=utf-8';
  t.throws(() => check('GET', `${weir.url}/api/v1/customers/c1`, 200, json, { id: 1 }), {
    message:
      /GET \/api\/v1\/customers\/c1 \(200\) does not match the OpenAPI document \(\/api\/v1\/customers\/\{id\}\)/,
  });
  // A literal segment wins over a template: /event-types is not /{id}.
  t.throws(() => check('GET', `${weir.url}/api/v1/webhook-endpoints/event-types`, 200, json, { events: ['nope'] }));
  t.notThrows(() => check('GET', `${weir.url}/api/v1/webhook-endpoints/event-types/`, 200, json, { events: ['*'] }));
  t.notThrows(() =>
    check('GET', `${weir.url}/api/v1/webhook-endpoints/event-types`, 200, json, {
      events: ['payment_intent.failed', 'payment_intent.payment_failed'],
    }),
  );
  // Error bodies are checked on every route, declared or not.
  t.throws(() => check('POST', `${weir.url}/api/v1/invoices`, 401, json, { message: 'no key' }));
  t.notThrows(() =>
    check('POST', `${weir.url}/api/v1/invoices`, 401, json, {
      statusCode: 401,
      error: 'Unauthorized',
      message: 'no key',
      code: 'authentication_required',
    }),
  );
  // The codes an error answer lists, by its examples; none for an answer without them.
  t.true(check.documentedCodes('POST', `${weir.url}/api/v1/invoices`, 401)?.includes('authentication_required'));
  t.is(check.documentedCodes('GET', `${weir.url}/api/v1/customers/c1`, 200), null);
  // Not JSON, or a status the route declares no schema for: nothing to check.
  t.notThrows(() => check('GET', `${weir.url}/checkout/abc`, 200, 'text/html', '<html></html>'));
  t.notThrows(() => check('POST', `${weir.url}/api/v1/invoices`, 201, json, { anything: true }));
});

test('an error answer whose code the document does not list for its route and status throws, so the document cannot list fewer codes than the routes answer', async (t) => {
  const weir = await startTestWeir(t);
  const check = await responseCheckFor(weir.url);
  if (!check) return t.fail('no document served');
  const json = 'application/json; charset=utf-8';
  const error = (statusCode: number, code: string) => ({ statusCode, error: 'Bad Request', message: code, code });
  t.notThrows(() => check('POST', `${weir.url}/api/v1/customers`, 400, json, error(400, 'email_invalid')));
  t.throws(() => check('POST', `${weir.url}/api/v1/customers`, 400, json, error(400, 'no_such_code')), {
    message:
      /POST \/api\/v1\/customers \(400\) has code no_such_code, which the OpenAPI document \(\/api\/v1\/customers\) does not list for 400/,
  });
  // A status the route documents no error for at all.
  t.throws(() => check('GET', `${weir.url}/api/v1/customers/c1`, 422, json, error(422, 'resource_missing')));
  // A method the document has no operation for (a 405) has nowhere to list codes; nor a path it does not know.
  t.notThrows(() => check('PATCH', `${weir.url}/api/v1/customers/c1`, 405, json, error(405, 'method_not_allowed')));
  t.notThrows(() => check('GET', `${weir.url}/nowhere`, 404, json, error(404, 'not_found')));
});

test('a delivered webhook that does not match its documented payload throws (a session is documented in full, as the API shows it); other bodies are let be', (t) => {
  const event = (type: string, object: unknown) =>
    JSON.stringify({
      id: 'e1',
      apiVersion: '2026-11-01',
      created: 1,
      livemode: false,
      object: 'subscription',
      type,
      data: { object },
    });
  t.throws(() => checkWebhookBody(event('customer.subscription.created', { id: 's1' })), {
    message: /customer\.subscription\.created webhook does not match the OpenAPI document/,
  });
  t.throws(() => checkWebhookBody(event('nobody.sends.this', { id: 'x' })), { message: /not in the OpenAPI document/ });
  t.throws(() => checkWebhookBody(event('checkout_session.completed', { id: 'cs1', anything: 1 })), {
    message: /checkout_session\.completed webhook does not match the OpenAPI document: .*organizationId/,
  });
  // The specification's name for a failed payment intent is documented, with the failed intent's payload.
  t.throws(() => checkWebhookBody(event('payment_intent.failed', { id: 'pi1' })), {
    message: /payment_intent\.failed webhook does not match the OpenAPI document/,
  });
  t.notThrows(() => checkWebhookBody('plain text'));
});
