import test from 'ava';
import { ValidationError } from '../shared/errors.ts';
import { idempotencyKeyOf } from './idempotency-key.ts';

const refusal = (rawHeaders: string[]) => {
  const error = (() => {
    try {
      idempotencyKeyOf(rawHeaders);
      return null;
    } catch (e) {
      return e;
    }
  })();
  return error instanceof ValidationError ? error.message : String(error);
};

test('no Idempotency-Key is no key; one is taken as sent, whatever the case of its name', (t) => {
  t.is(idempotencyKeyOf(['Content-Type', 'application/json']), null);
  t.is(idempotencyKeyOf(['idempotency-KEY', 'order-42']), 'order-42');
  t.is(idempotencyKeyOf(['Idempotency-Key', 'k'.repeat(255)]), 'k'.repeat(255));
});

test('an Idempotency-Key sent but unusable is a 400 naming the header, not "no key"', (t) => {
  t.is(refusal(['Idempotency-Key', '']), 'Idempotency-Key: must not be empty');
  t.is(refusal(['Idempotency-Key', '   ']), 'Idempotency-Key: must not be empty');
  t.is(refusal(['Idempotency-Key', 'k'.repeat(256)]), 'Idempotency-Key: must be at most 255 characters');
  t.is(refusal(['Idempotency-Key', 'a\tb']), 'Idempotency-Key: must not contain control characters');
  t.is(refusal(['Idempotency-Key', 'a\u007fb']), 'Idempotency-Key: must not contain control characters');
  t.is(refusal(['Idempotency-Key', 'a', 'idempotency-key', 'b']), 'Idempotency-Key: must be sent once');
});
