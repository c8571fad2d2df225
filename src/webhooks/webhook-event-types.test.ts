import test from 'ava';
import { AUDIT_CHECKPOINT_EVENT_TYPE, TEST_WEBHOOK_EVENT_TYPE, subscribes } from './webhook-event-types.ts';

test('`*` takes in every event type but audit.checkpoint, which an endpoint receives only by naming it', (t) => {
  t.true(subscribes(['*'], 'invoice.paid'));
  t.false(subscribes(['*'], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.true(subscribes([AUDIT_CHECKPOINT_EVENT_TYPE], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.true(subscribes(['*', AUDIT_CHECKPOINT_EVENT_TYPE], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.false(subscribes(['invoice.paid'], AUDIT_CHECKPOINT_EVENT_TYPE));
  t.true(subscribes(['invoice.paid'], TEST_WEBHOOK_EVENT_TYPE));
});
