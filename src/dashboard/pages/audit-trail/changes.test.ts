import test from 'ava';
import { detected, sessionFixture } from '../../../../machines/checkout-session.fixture.ts';
import { Changes } from './page.tsx';
import {
  type ChangeRow,
  changeRows,
  describeRecordType,
  describeType,
  flatten,
  formatValue,
  HIDDEN,
  knownFields,
} from './changes.ts';

test('flatten: dotted paths, arrays of objects by index, lists of values joined, secrets hidden at any depth, file bytes by size', (t) => {
  t.deepEqual(
    flatten({
      name: 'Pat',
      address: { city: 'Lyon', line2: null },
      tags: ['a', 'b'],
      empty: [],
      items: [{ quantity: 2, secretHash: 'abc' }],
      endpoint: { sealedSecret: 'v1.xyz', url: 'https://shop.example' },
      user: { passwordHash: '$argon2id$…' },
      logo: { base64: 'AAAA' },
      transactionHash: '0xabc',
    }),
    [
      ['name', 'Pat'],
      ['address.city', 'Lyon'],
      ['address.line2', '—'],
      ['tags', 'a, b'],
      ['empty', 'none'],
      ['items[0].quantity', '2'],
      ['items[0].secretHash', HIDDEN],
      ['endpoint.sealedSecret', HIDDEN],
      ['endpoint.url', 'https://shop.example'],
      ['user.passwordHash', HIDDEN],
      ['logo.base64', '(3 bytes of a file)'],
      ['transactionHash', '0xabc'],
    ],
  );
});

test('formatValue: long text is cut and says its length; booleans and empty objects in words', (t) => {
  t.is(formatValue('x'.repeat(130)), `${'x'.repeat(120)}… (130 characters)`);
  t.is(formatValue(false), 'false');
  t.is(formatValue({}), 'none');
  t.is(formatValue(undefined), '—');
});

test("changeRows: an update's fields with their value before, from the record's creation and earlier updates", (t) => {
  const earlier = [
    {
      type: 'CustomerCreated',
      data: { customer: { id: 'c1', name: 'Pat', metadata: { tier: 'gold', since: '2024' } } },
    },
    { type: 'CustomerUpdated', data: { changes: { name: 'Pat B.' }, at: '2026-01-01T00:00:00Z' } },
  ];
  t.deepEqual(
    changeRows(
      {
        type: 'CustomerUpdated',
        data: { changes: { name: 'Patricia', phone: '+33 1', metadata: { tier: 'gold' } }, at: 'x' },
      },
      earlier,
    ),
    [
      { path: 'name', before: 'Pat B.', after: 'Patricia' },
      { path: 'phone', after: '+33 1' },
      { path: 'metadata.tier', before: 'gold', after: 'gold' },
    ],
  );
  // A field given whole replaces what was under it: `metadata.since` is gone after that update.
  t.false(
    knownFields([...earlier, { type: 'CustomerUpdated', data: { changes: { metadata: { tier: 'x' } } } }]).has(
      'metadata.since',
    ),
  );
});

test("changeRows: a creation's snapshot as the record's own fields (tenant left out); other events' data as it is, `at` left out", (t) => {
  t.deepEqual(
    changeRows({
      type: 'CustomerCreated',
      data: { customer: { id: 'c1', organizationId: 'o', environment: 'test', email: 'pat@example.com' } },
    }),
    [
      { path: 'id', after: 'c1' },
      { path: 'email', after: 'pat@example.com' },
    ],
  );
  t.deepEqual(changeRows({ type: 'CheckoutSessionCanceled', data: { reason: 'canceled by the merchant', at: 'x' } }), [
    { path: 'reason', after: 'canceled by the merchant' },
  ]);
  t.deepEqual(
    changeRows({ type: 'ApiKeyRegenerated', data: { secretHash: 'h1', previousSecretHash: 'h0', last4: 'abcd' } }),
    [
      { path: 'secretHash', after: HIDDEN },
      { path: 'previousSecretHash', after: HIDDEN },
      { path: 'last4', after: 'abcd' },
    ],
  );
});

test('describeType and describeRecordType read as words', (t) => {
  t.is(describeType('CheckoutSessionCanceled'), 'Checkout session canceled');
  t.is(describeRecordType('checkout_session'), 'Checkout session');
  t.is(describeRecordType('api_key'), 'API key');
  t.is(describeType('ApiKeyIssued'), 'API key issued');
});

test("two-factor events (turned on, codes renewed) show neither the recovery codes' hashes nor the sealed secret", (t) => {
  t.deepEqual(flatten({ recoveryCodeHashes: ['h1', 'h2'], secretSealed: 'v1.x', step: 3 }), [
    ['recoveryCodeHashes', HIDDEN],
    ['secretSealed', HIDDEN],
    ['step', '3'],
  ]);
});

test("changeRows: an item updated whole (a wallet of the organization) shows each changed field beside its value before, from the same item's earlier events", (t) => {
  const earlier = [
    { type: 'WithdrawalAddressAdded', data: { id: 'w1', name: 'Cold', address: '0xaaa', chainId: 1, at: 'a' } },
    { type: 'WithdrawalAddressAdded', data: { id: 'w2', name: 'Hot', address: '0xbbb', chainId: 1, at: 'b' } },
    { type: 'WithdrawalAddressUpdated', data: { id: 'w1', name: 'Cold vault', address: '0xaaa', at: 'c' } },
  ];
  t.deepEqual(
    changeRows(
      { type: 'WithdrawalAddressUpdated', data: { id: 'w1', name: 'Cold vault', address: '0xccc', at: 'd' } },
      earlier,
    ),
    [
      { path: 'id', after: 'w1' },
      { path: 'name', after: 'Cold vault' },
      { path: 'address', before: '0xaaa', after: '0xccc' },
    ],
  );
  // An item Weir has no earlier event of: its fields as they are.
  t.deepEqual(changeRows({ type: 'WithdrawalAddressUpdated', data: { id: 'w9', address: '0xddd' } }, earlier), [
    { path: 'id', after: 'w9' },
    { path: 'address', after: '0xddd' },
  ]);
});

test('changeRows: a Tron txID and block id as Tron’s tools show them (bare), by the chain beside them or named by earlier or related events; EVM hashes as the log keeps them', (t) => {
  const txid = 'ab'.repeat(32);
  const block = 'cd'.repeat(32);
  const evm = `0x${'ef'.repeat(32)}`;
  const tronPayment = {
    type: 'PaymentDetected',
    data: {
      payment: {
        chainId: 1416785484,
        transactionHash: `0x${txid}`,
        blockHash: `0x${block}`,
        seenIn: [{ hash: `0x${block}`, number: 5 }],
      },
    },
  };
  t.like(Object.fromEntries(changeRows(tronPayment).map((r) => [r.path, r.after])), {
    transactionHash: txid,
    blockHash: block,
    'seenIn[0].hash': block,
  });
  const completed = { type: 'CheckoutSessionCompleted', data: { transactionHash: `0x${txid}`, amountReceived: '1' } };
  t.deepEqual(changeRows(completed, [tronPayment])[0], { path: 'transactionHash', after: txid });
  // An invoice paid before `InvoicePaid` named the chain: its paying session's events name it.
  const invoicePaid = { type: 'InvoicePaid', data: { checkoutSessionId: 'cs', transactionHash: `0x${txid}` } };
  t.like(changeRows(invoicePaid, [], [tronPayment])[1], { path: 'transactionHash', after: txid });
  t.like(
    changeRows(invoicePaid)[1],
    { path: 'transactionHash', after: `0x${txid}` },
    'no chain known: as the log keeps it',
  );
  const onEvm = { type: 'PaymentDetected', data: { payment: { chainId: 1, transactionHash: evm, blockHash: evm } } };
  t.like(Object.fromEntries(changeRows(onEvm).map((r) => [r.path, r.after])), {
    transactionHash: evm,
    blockHash: evm,
  });
});

test("changeRows: a checkout session's amounts written with their currency, each on its own scale (the asset's units for amountDue and amountRaw, Weir's 10^8 elsewhere), the log's integer kept", (t) => {
  const session = sessionFixture();
  const earlier = [{ type: 'CheckoutSessionCreated', data: { session } }];
  // 12.345678 USDC, as the payer's choice asks it (6 decimals) and as the completion records it (10^8).
  const chose = {
    type: 'PaymentMethodSelected',
    data: { addressId: 'addr-usdc', amountDue: '12345678', amountGasFee: '0' },
  };
  t.like(Object.fromEntries(changeRows(chose, earlier).map((r) => [r.path, r])), {
    amountDue: { after: '12.345678 USDC', raw: '12345678' },
    amountGasFee: { after: '0.00 USDC', raw: '0' },
    addressId: { after: 'addr-usdc' },
  });
  const completed = {
    type: 'CheckoutSessionCompleted',
    data: { amountReceived: '1234567800', amountOverpaid: '0', transactionHash: null, partial: false },
  };
  t.like(Object.fromEntries(changeRows(completed, earlier).map((r) => [r.path, r])), {
    amountReceived: { after: '12.345678 USDC', raw: '1234567800' },
  });
  const paid = detected('t1', '1234567800');
  t.like(Object.fromEntries(changeRows(paid, earlier).map((r) => [r.path, r])), {
    amount: { after: '12.345678 USDC', raw: '1234567800' },
    amountRaw: { after: '12.345678 USDC', raw: '12345678' },
    blockNumber: { after: '10' },
  });
  // The creation's own amounts, on the same scale.
  t.like(Object.fromEntries(changeRows(earlier[0]!).map((r) => [r.path, r])), {
    amountTotal: { after: '3.00 USDC', raw: '300000000' },
  });
  // Another record's amounts: their scale is not known here, shown as the log holds them.
  t.deepEqual(changeRows({ type: 'InvoiceCreated', data: { amount: '100' } }), [{ path: 'amount', after: '100' }]);
});

test('the trail shows an amount with its currency and, in a muted line, the integer the log holds', async (t) => {
  const html = await Changes({
    entry: { rows: [{ path: 'amountReceived', after: '12.345678 USDC', raw: '1234567800' }] },
  });
  t.regex(html, /<ins>12\.345678 USDC<\/ins><span class="raw muted small">in the log: 1234567800<\/span>/);
});

test("changeRows: an invoice's, a subscription's and a payment link's amounts written in the record's currency (an update's value before too), the log's integer kept", (t) => {
  const rowsOf = (rows: ChangeRow[]) => Object.fromEntries(rows.map((r) => [r.path, r]));
  const invoiceCreated = {
    type: 'InvoiceCreated',
    data: {
      invoice: { id: 'in1', currency: 'eur', amountDue: '1250000000', lineItems: [{ unitAmount: '250000000' }] },
    },
  };
  t.like(rowsOf(changeRows(invoiceCreated)), {
    amountDue: { after: '12.50 EUR', raw: '1250000000' },
    'lineItems[0].unitAmount': { after: '2.50 EUR', raw: '250000000' },
  });
  const paid = { type: 'InvoicePaid', data: { checkoutSessionId: 'cs', amountPaid: '1250000000', chainId: 1 } };
  t.like(rowsOf(changeRows(paid, [invoiceCreated])), { amountPaid: { after: '12.50 EUR', raw: '1250000000' } });
  const updated = { type: 'InvoiceUpdated', data: { changes: { amountDue: '1500000000' }, at: 'x' } };
  t.deepEqual(changeRows(updated, [invoiceCreated]), [
    { path: 'amountDue', before: '12.50 EUR', after: '15.00 EUR', raw: '1500000000' },
  ]);

  const subscription = {
    type: 'SubscriptionCreated',
    data: { subscription: { id: 's1', currency: 'usd', amountTotal: '900000000', periodAmountDue: '990000000' } },
  };
  const renewal = { type: 'RenewalInvoiceIssued', data: { invoice: { id: 'in2', amountDue: '990000000' } } };
  t.like(rowsOf(changeRows(subscription)), {
    amountTotal: { after: '9.00 USD', raw: '900000000' },
    periodAmountDue: { after: '9.90 USD', raw: '990000000' },
  });
  t.like(rowsOf(changeRows(renewal, [subscription])), { amountDue: { after: '9.90 USD' } });

  const link = {
    type: 'PaymentLinkCreated',
    data: {
      link: {
        id: 'pl1',
        currency: 'usdc',
        amount: null,
        suggestedAmounts: ['500000000', '1000000000'],
        minimumAmount: '100000000',
        maximumAmount: '5000000000',
      },
    },
  };
  t.like(rowsOf(changeRows(link)), {
    amount: { after: '—' },
    suggestedAmounts: { after: '5.00 USDC, 10.00 USDC', raw: '500000000, 1000000000' },
    minimumAmount: { after: '1.00 USDC', raw: '100000000' },
    maximumAmount: { after: '50.00 USDC', raw: '5000000000' },
  });
});

test("changeRows: a sweep's gas written in its chain's native coin (wei as ETH, sun as TRX), the log's integer kept; a chain not known, as the log holds it", (t) => {
  const rowsOf = (rows: ChangeRow[]) => Object.fromEntries(rows.map((r) => [r.path, r]));
  const earlier = [{ type: 'CheckoutSessionCreated', data: { session: sessionFixture() } }];
  const natives = new Map([
    [31337, { decimals: 18, unit: 'ETH' }],
    [1416785484, { decimals: 6, unit: 'TRX' }],
  ]);
  const swept = (chainId: number, extra: Record<string, unknown> = {}) => ({
    type: 'FundsSwept',
    data: {
      sweep: { network: 'n', chainId, transactionHash: '0xab', gasUsed: '52000', gasCost: '104000000000000', ...extra },
    },
  });
  t.like(rowsOf(changeRows(swept(31337), earlier, [], natives)), {
    gasUsed: { after: '52000' },
    gasCost: { after: '0.000104 ETH', raw: '104000000000000' },
  });
  const tron = swept(1416785484, {
    gasCost: '345000',
    tron: { energyUsed: '31895', bandwidthUsed: '345', trxBurnt: '345000', energySource: 'burn' },
  });
  t.like(rowsOf(changeRows(tron, earlier, [], natives)), {
    gasCost: { after: '0.345 TRX', raw: '345000' },
    'tron.trxBurnt': { after: '0.345 TRX', raw: '345000' },
    'tron.energyUsed': { after: '31895' },
  });
  t.deepEqual(rowsOf(changeRows(swept(5), earlier, [], natives)).gasCost, {
    path: 'gasCost',
    after: '104000000000000',
  });
});

test("changeRows: what a sweep moved (FundsSwept, TransfersFoundSwept) is written in its asset's decimals, the asset named by its id; an asset not known, as the log holds it", (t) => {
  const rowsOf = (rows: ChangeRow[]) => Object.fromEntries(rows.map((r) => [r.path, r]));
  const earlier = [{ type: 'CheckoutSessionCreated', data: { session: sessionFixture() } }];
  const swept = {
    type: 'FundsSwept',
    data: {
      sweep: {
        network: 'n',
        chainId: 31337,
        transactionHash: '0xab',
        gasUsed: '52000',
        gasCost: '1',
        moved: [{ asset: 'weir-testnet:usdc', amountRaw: '2500000' }],
      },
    },
  };
  t.like(rowsOf(changeRows(swept, earlier)), {
    'moved[0].amountRaw': { after: '2.50 USDC', raw: '2500000' },
  });
  const found = {
    type: 'TransfersFoundSwept',
    data: {
      network: 'n',
      transactionHash: '0xab',
      blockNumber: 9,
      depositAddress: '0xdd',
      transferIds: ['t2'],
      moved: [
        { asset: 'weir-testnet:usdc', amountRaw: '1000000' },
        { asset: 'other:coin', amountRaw: '7' },
      ],
      at: 'x',
    },
  };
  t.like(rowsOf(changeRows(found, earlier)), {
    'moved[0].amountRaw': { after: '1.00 USDC', raw: '1000000' },
    'moved[1].amountRaw': { after: '7' },
  });
});
