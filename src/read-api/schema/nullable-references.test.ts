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

test('an enum beside a type that takes null lists null; one whose type refuses null is left as it is', (t) => {
  t.deepEqual(nullableReferences({ object: { type: ['string', 'null'], enum: ['list'] } }), {
    object: { type: ['string', 'null'], enum: ['list', null] },
  });
  t.deepEqual(nullableReferences({ object: { type: 'string', enum: ['list'] } }), {
    object: { type: 'string', enum: ['list'] },
  });
});

test('a nullable schema with its own oneOf (which null would meet every branch of) becomes that schema or null', (t) => {
  const oneOf = [{ required: ['productId'] }, { required: ['productData'] }];
  t.deepEqual(
    nullableReferences({ priceData: { type: ['object', 'null'], description: 'A new price', oneOf, required: [] } }),
    { priceData: { description: 'A new price', anyOf: [{ type: 'object', oneOf, required: [] }, { type: 'null' }] } },
  );
});
