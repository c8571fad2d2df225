import test from 'ava';
import { ConflictError, ValidationError } from '../shared/errors.ts';
import { formErrorOf } from './command.ts';

test('a refusal naming a field goes under it, as a sentence; one naming none goes above the form', (t) => {
  t.deepEqual(formErrorOf(new ValidationError('email', 'must be an email address')), {
    field: 'email',
    message: 'Must be an email address.',
  });
  t.deepEqual(formErrorOf(new ValidationError('lineItems.data[0].quantity', 'must be at least 1')), {
    field: 'lineItems.data[0].quantity',
    message: 'Must be at least 1.',
  });
  t.deepEqual(formErrorOf(new ConflictError('the invoice is already paid.')), {
    field: null,
    message: 'The invoice is already paid.',
  });
});
