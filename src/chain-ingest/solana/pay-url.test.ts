import test from 'ava';
import { isAddress, type Address } from '@solana/kit';
import { newReference, sessionReference, transferRequestUrl } from './pay-url.ts';
import { solanaMainnet } from './networks.ts';

const MERCHANT = 'mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN' as Address;
const USDC = solanaMainnet.assets[1]!.address as Address;
const REFERENCE = '82ZJ7nbGpixjeDCmEhUcmwXYfvurzAgGdtSMuHnUgyny' as Address;

test('an SPL transfer request carries the exact decimal amount, mint, reference, label and message', (t) => {
  const url = transferRequestUrl({
    recipient: MERCHANT,
    amount: 1_500_000n,
    decimals: 6,
    splToken: USDC,
    references: [REFERENCE],
    label: 'Acme & Co',
    message: 'Order #42 — thanks!',
  });
  t.is(
    url,
    `solana:${MERCHANT}?amount=1.5&spl-token=${USDC}&reference=${REFERENCE}&label=Acme%20%26%20Co&message=Order%20%2342%20%E2%80%94%20thanks!`,
  );
  const parsed = new URL(url);
  t.is(parsed.protocol, 'solana:');
  t.is(parsed.pathname, MERCHANT);
  t.is(parsed.searchParams.get('label'), 'Acme & Co');
  t.is(parsed.searchParams.get('message'), 'Order #42 — thanks!');
});

test('amounts are written exactly from base units, with a leading zero and no exponent', (t) => {
  const amount = (value: bigint, decimals: number) =>
    new URL(transferRequestUrl({ recipient: MERCHANT, amount: value, decimals, references: [] })).searchParams.get(
      'amount',
    );
  t.is(amount(1n, 9), '0.000000001');
  t.is(amount(1_000_000_000n, 9), '1');
  t.is(amount(123_456_789_012_345_678_901n, 9), '123456789012.345678901');
  t.is(amount(10n, 6), '0.00001');
  t.is(amount(7n, 0), '7');
});

test('a SOL request has no spl-token; several references keep their order; no amount lets the payer choose', (t) => {
  const other = newReference();
  t.is(
    transferRequestUrl({ recipient: MERCHANT, decimals: 9, references: [REFERENCE, other] }),
    `solana:${MERCHANT}?reference=${REFERENCE}&reference=${other}`,
  );
  t.is(transferRequestUrl({ recipient: MERCHANT, decimals: 9, references: [] }), `solana:${MERCHANT}`);
});

test('bad fields are rejected, naming the field', (t) => {
  const base = { recipient: MERCHANT, decimals: 6, references: [REFERENCE] };
  t.throws(() => transferRequestUrl({ ...base, amount: 0n }), { message: 'amount: must be positive, got 0' });
  t.throws(() => transferRequestUrl({ ...base, recipient: '0xabc' as Address }), { message: /^recipient: / });
  t.throws(() => transferRequestUrl({ ...base, splToken: 'x' as Address }), { message: /^splToken: / });
  t.throws(() => transferRequestUrl({ ...base, references: [REFERENCE, 'y' as Address] }), {
    message: /^references\[1\]: /,
  });
  t.throws(() => transferRequestUrl({ ...base, decimals: 1.5 }), { message: /^decimals: / });
});

test('fresh references are addresses and never repeat', (t) => {
  const references = Array.from({ length: 200 }, newReference);
  for (const reference of references) t.true(isAddress(reference));
  t.is(new Set(references).size, references.length);
});

test('a session reference is stable for its inputs and differs when one changes', (t) => {
  const input = {
    network: 'solana-mainnet',
    organizationId: 'org_1',
    checkoutSessionId: 'cs_1',
    merchantAddress: MERCHANT,
  };
  const reference = sessionReference(input);
  t.true(isAddress(reference));
  t.is(sessionReference({ ...input }), reference);
  t.not(sessionReference({ ...input, checkoutSessionId: 'cs_2' }), reference);
  t.not(sessionReference({ ...input, network: 'solana-devnet' }), reference);
  t.not(
    sessionReference({ ...input, organizationId: 'org_1cs_1', checkoutSessionId: '' }),
    reference,
    'parts do not run together',
  );
});
