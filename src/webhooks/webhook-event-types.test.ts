import test from 'ava';
import {
  AUDIT_CHECKPOINT_EVENT_TYPE,
  deliveredAs,
  referenceNameOf,
  TEST_WEBHOOK_EVENT_TYPE,
  subscribes,
} from './webhook-event-types.ts';

test('`*` takes in every event type but audit.checkpoint, which an endpoint receives only by naming it', (t) => {
  t.true(subscribes(['*'], 'invoice.paid'));
  t.false(subscribes(['*'], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.true(subscribes([AUDIT_CHECKPOINT_EVENT_TYPE], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.true(subscribes(['*', AUDIT_CHECKPOINT_EVENT_TYPE], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.false(subscribes(['invoice.paid'], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.true(subscribes(['invoice.paid'], TEST_WEBHOOK_EVENT_TYPE));
});

test('a failed payment intent is sent under the name the endpoint listed: the specification’s only when it listed that one and not the reference’s', (t) => {
  const failed = 'payment_intent.payment_failed';
  t.is(deliveredAs(['payment_intent.failed'], failed), 'payment_intent.failed');
  t.is(deliveredAs(['*', 'payment_intent.failed'], failed), 'payment_intent.failed');
  t.is(deliveredAs([failed], failed), failed);
  t.is(deliveredAs(['*'], failed), failed);
  t.is(deliveredAs(['payment_intent.failed', failed], failed), failed);
  t.is(deliveredAs(['invoice.paid'], failed), null);
  t.is(deliveredAs(['payment_intent.failed'], 'payment_intent.succeeded'), null, 'the other name of one kind only');
  t.is(deliveredAs(['payment_intent.failed'], TEST_WEBHOOK_EVENT_TYPE), TEST_WEBHOOK_EVENT_TYPE);
  t.is(referenceNameOf('payment_intent.failed'), failed, 'its payload is the failed intent’s');
  t.is(referenceNameOf('invoice.paid'), 'invoice.paid');
});

test("the README's Webhooks section names every event type Weir sends, in full or as `.name` after its family", async (t) => {
  const { readFile } = await import('node:fs/promises');
  const { WEBHOOK_EVENT_TYPES } = await import('./webhook-event-types.ts');
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('### Webhooks'));
  for (const type of [...WEBHOOK_EVENT_TYPES, TEST_WEBHOOK_EVENT_TYPE]) {
    const cut = type.lastIndexOf('.');
    const family = type.slice(0, cut);
    const named =
      readme.includes(`\`${type}\``) ||
      (section.includes(`\`${family}.`) && readme.includes(`\`.${type.slice(cut + 1)}\``));
    t.true(named, type);
  }
});
