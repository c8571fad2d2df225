import test from 'ava';
import { nullableReferences } from './nullable-references.ts';

const ref = { $ref: '#/components/schemas/Customer' };

test('a nullable reference becomes anyOf with a null type, its description beside it', (t) => {
  t.deepEqual(
    nullableReferences({ customer: { allOf: [ref, { type: ['object', 'null'], description: 'The buyer' }] } }),
    { customer: { description: 'The buyer', anyOf: [ref, { type: 'null' }] } },
  );
});

test('what the null-type sibling still constrains stays with the reference; other allOfs are left as they are', (t) => {
  const extended = { allOf: [ref, { type: 'object', properties: { a: { type: 'string' } } }] };
  t.deepEqual(
    nullableReferences({
      items: [{ allOf: [ref, { type: ['object', 'null'], properties: { b: { type: 'integer' } } }] }, extended],
    }),
    {
      items: [{ anyOf: [{ allOf: [ref, { properties: { b: { type: 'integer' } } }] }, { type: 'null' }] }, extended],
    },
  );
});
