import test from 'ava';
import { IllegalEventError } from '../src/actors/aggregate.ts';
import { givenWhenThen } from '../src/actors/given-when-then.ts';
import { ConflictError, InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { checkoutSessionAggregate } from './checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from './checkout-session.decide.ts';
import {
  canceled,
  confirmed,
  created,
  daiPaymentFixture,
  daiSessionFixture,
  detected,
  lineItemFixture,
  paymentFixture,
  sessionFixture,
} from './checkout-session.fixture.ts';
import { NOT_IN_FINAL_BLOCK, type CheckoutSessionEvent } from './checkout-session.types.ts';

const given = givenWhenThen(checkoutSessionAggregate);
const NOW = '2026-01-01T00:30:00.000Z';
const AFTER_EXPIRY = '2026-01-01T01:00:00.000Z';
/** What a sweep moved of the fixture's USDC. */
const usdcMoved = (amountRaw: string) => [{ asset: '0x00000000000000000000000000000000000a11ce', amountRaw }];
const completedEvent = (
  amountReceived: string,
  amountOverpaid = '0',
  transactionHash: string | null = `0x${'a'.padStart(64, '0')}`,
): CheckoutSessionEvent => ({
  type: 'CheckoutSessionCompleted',
  data: { amountReceived, amountOverpaid, transactionHash, partial: false, at: NOW },
});
/** A Tron reconciliation credit: 3 USDC read at block 20 from a deposit's balance. */
const credit = {
  ...paymentFixture('r1', '300000000'),
  transactionHash: 'reconciliation-abc',
  fromAddress: 'reconciliation',
  logIndex: -1,
  blockNumber: 20,
};
const expired: CheckoutSessionEvent = { type: 'CheckoutSessionExpired', data: { at: AFTER_EXPIRY } };

test('given nothing, when created, then CheckoutSessionCreated and the session is open', (t) => {
  const session = sessionFixture();
  const events = given([]).when({ type: 'CreateCheckoutSession', session });
  t.deepEqual(events, [created(session)]);
  t.true(given(events).state().matches('open'));
});

test('given a created session, when created again, then nothing (idempotent)', (t) => {
  t.deepEqual(given([created()]).when({ type: 'CreateCheckoutSession', session: sessionFixture() }), []);
});

test('given an open session, when the payer picks USDC, then the amount due is in USDC chain units', (t) => {
  t.deepEqual(given([created()]).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW), [
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '3000000', amountGasFee: '0', at: NOW },
    },
  ]);
});

test('given a chosen asset, when the same asset is picked again, then nothing', (t) => {
  const picked: CheckoutSessionEvent = {
    type: 'PaymentMethodSelected',
    data: { addressId: 'addr-usdc', amountDue: '3000000', amountGasFee: '0', at: NOW },
  };
  t.deepEqual(given([created(), picked]).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }), []);
});

test('given a partly paid session, when the payer picks the asset, then only the rest is due', (t) => {
  const events = given([
    created(),
    detected('t1', '100000000'),
    confirmed('t1'),
    { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: NOW } },
  ]).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW);
  t.deepEqual(events, [
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '2000000', amountGasFee: '0', at: NOW },
    },
  ]);
});

test('when an asset the session does not offer is picked, then a validation error', (t) => {
  t.throws(() => given([created()]).when({ type: 'SelectPaymentMethod', addressId: 'nope' }), {
    instanceOf: ValidationError,
  });
});

test('given an expired session, when an asset is picked, then refused naming the status', (t) => {
  const error = t.throws(
    () => given([created(), expired]).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }),
    { instanceOf: InvalidStateError },
  );
  t.regex(error.message, /expired/);
});

test('when a transfer is recorded, then PaymentDetected and the intent is processing', (t) => {
  const events = given([created()]).when({ type: 'RecordTransfer', payment: paymentFixture('t1', '300000000') }, NOW);
  t.is(events.length, 1);
  t.is(events[0]!.type, 'PaymentDetected');
  const state = given([created(), ...events]).state();
  t.deepEqual(state.value, { open: 'processing' });
  t.is(state.context.session?.paymentIntent.status, 'processing');
});

test('given a recorded transfer, when the same transfer is recorded again, then nothing', (t) => {
  t.deepEqual(
    given([created(), detected('t1', '300000000')]).when({
      type: 'RecordTransfer',
      payment: paymentFixture('t1', '300000000'),
    }),
    [],
  );
});

test('given a pending transfer, when its block is reorged away, then PaymentWithdrawn and the intent stays processing while the transfer is awaited back; once its height is final in another block, the intent needs a payment again and its payment failed, once', (t) => {
  const history = [created(), detected('t1', '300000000')];
  const events = given(history).when({ type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' }, NOW);
  // The payer is told not to pay again: no payment_failed tells the merchant otherwise.
  t.deepEqual(events, [
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: NOW, mayReturn: true } },
  ]);
  const waiting = [...history, ...events];
  t.like(given(waiting).state().context.session, { paymentStatus: 'unpaid', paymentIntent: { status: 'processing' } });
  const gone = given(waiting).when({ type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK }, NOW);
  t.deepEqual(gone, [
    {
      type: 'PaymentWithdrawn',
      data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: NOW, paymentFailed: true },
    },
  ]);
  t.like(given([...waiting, ...gone]).state().context.session, {
    status: 'open',
    paymentIntent: { status: 'requires_payment_method' },
  });
  t.deepEqual(
    given([...waiting, ...gone]).when({ type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK }, NOW),
    [],
  );
});

test('a log written before a reorg wait kept the intent processing (its withdrawal a failed payment) replays the same events; the intent now reads processing while it waits', (t) => {
  const before: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW, paymentFailed: true, mayReturn: true },
  };
  const session = given([created(), detected('t1', '300000000'), before]).state().context.session!;
  t.like(session, { status: 'open', paymentIntent: { status: 'processing' } });
});

test('a withdrawal logged before the rule (mayReturn + paymentFailed), given up after the upgrade, fails the intent no second time; one awaited under the rule still fails it once', (t) => {
  const before: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW, paymentFailed: true, mayReturn: true },
  };
  const giveUp = { type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK } as const;
  const history = [created(), detected('t1', '300000000'), before];
  const gone = given(history).when(giveUp, NOW);
  t.deepEqual(gone, [{ type: 'PaymentWithdrawn', data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: NOW } }]);
  t.like(given([...history, ...gone]).state().context.session, {
    status: 'open',
    paymentIntent: { status: 'requires_payment_method' },
  });
  t.is(given([...history, ...gone]).state().context.session?.payments[0]?.failureSent, undefined);
  // Mined again and taken away again under the rule: that wait told nothing, its end does.
  const again = given(history).when(
    { type: 'RecordTransfer', payment: { ...paymentFixture('t1', '300000000'), blockHash: '0xb10d' } },
    NOW,
  );
  const rewithdrawn = given([...history, ...again]).when(
    { type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' },
    NOW,
  );
  t.deepEqual(given([...history, ...again, ...rewithdrawn]).when(giveUp, NOW), [
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: NOW, paymentFailed: true } },
  ]);
});

test('a withdrawal is no failed payment while another payment is still pending, or money is already confirmed', (t) => {
  const withdraw = { type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' } as const;
  const another = given([created(), detected('t1', '100000000'), detected('t2', '200000000')]).when(withdraw, NOW);
  t.deepEqual(another, [
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: NOW, mayReturn: true } },
  ]);
  const partial: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '100000000', at: NOW },
  };
  const confirmedBefore = given([
    created(),
    detected('t2', '100000000'),
    confirmed('t2'),
    partial,
    detected('t1', '1'),
  ]).when(withdraw, NOW);
  // Part-paid, the session never expires: nothing waits for the transfer to come back.
  t.deepEqual(confirmedBefore, [{ type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: NOW } }]);
  // The second of two withdrawals while the first is awaited back fails nothing either; the first
  // given up then leaves the intent waiting for nothing: that one failed it.
  const history = [created(), detected('t1', '100000000'), detected('t2', '200000000'), ...another];
  const second = given(history).when({ type: 'WithdrawTransfer', transferId: 't2', reason: NOT_IN_FINAL_BLOCK }, NOW);
  t.deepEqual(second, [{ type: 'PaymentWithdrawn', data: { transferId: 't2', reason: NOT_IN_FINAL_BLOCK, at: NOW } }]);
  t.deepEqual(
    given([...history, ...second]).when(
      { type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK },
      NOW,
    ),
    [
      {
        type: 'PaymentWithdrawn',
        data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: NOW, paymentFailed: true },
      },
    ],
  );
});

test('a final that ends a transfer settles it once, awaited back or not, pending or withdrawn: nothing then changes it but its being mined again, counted once', (t) => {
  const settle = { type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK, settled: true } as const;
  const history = [created(), detected('t1', '300000000')];
  // Pending: withdrawn and settled at once.
  t.deepEqual(given(history).when(settle, NOW), [
    {
      type: 'PaymentWithdrawn',
      data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: NOW, paymentFailed: true, settled: true },
    },
  ]);
  // Awaited back: given up and settled.
  const awaited = [
    ...history,
    ...given(history).when({ type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' }, NOW),
  ];
  t.deepEqual(given(awaited).when(settle, NOW), given(history).when(settle, NOW));
  // Withdrawn past expiry, not awaited: a final changed nothing of it, but now records it settled, once.
  const late = [...history, expired];
  const notAwaited: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: AFTER_EXPIRY },
  };
  const settled = given([...late, notAwaited]).when(settle, AFTER_EXPIRY);
  t.deepEqual(settled, [
    {
      type: 'PaymentWithdrawn',
      data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: AFTER_EXPIRY, settled: true },
    },
  ]);
  const after = [...late, notAwaited, ...settled];
  t.like(given(after).state().context.session, {
    status: 'expired',
    payments: [{ status: 'withdrawn', settled: true }],
  });
  t.deepEqual(given(after).when(settle, AFTER_EXPIRY), []);
  t.deepEqual(given(after).when({ type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK }, NOW), []);
  // A withdrawal by a reorg records nothing settled (a Solana slot finalized without it may yet hold it).
  t.false(
    'settled' in
      given(history).when({ type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK }, NOW)[0]!.data,
  );
  // Mined again in a new block: detected again as a new transfer (settled no more), late, counted once.
  const again = { ...paymentFixture('t1', '300000000'), blockNumber: 12, blockHash: '0xb10e' };
  const detectedAgain = given(after).when({ type: 'RecordTransfer', payment: again }, AFTER_EXPIRY);
  t.deepEqual(
    detectedAgain.map((e) => e.type),
    ['PaymentDetected'],
  );
  const counted = given([...after, ...detectedAgain]).when({ type: 'ConfirmTransfer', transferId: 't1' }, AFTER_EXPIRY);
  t.deepEqual(
    counted.map((e) => e.type),
    ['PaymentConfirmed', 'LatePaymentReceived'],
  );
  const session = given([...after, ...detectedAgain, ...counted]).state().context.session!;
  t.like(session.payments, [{ status: 'confirmed', blockHash: '0xb10e', late: true }]);
  t.is(session.payments[0]!.settled, undefined);
  t.deepEqual(given([...after, ...detectedAgain, ...counted]).when(settle, AFTER_EXPIRY), []);
});

test('given a withdrawn transfer, when it is confirmed, then nothing (it can never count)', (t) => {
  const withdrawn: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW },
  };
  t.deepEqual(
    given([created(), detected('t1', '300000000'), withdrawn]).when({ type: 'ConfirmTransfer', transferId: 't1' }),
    [],
  );
});

test('given a transfer withdrawn by a reorg, when the same transfer is mined again in another block, then it is detected again and completes the session once', (t) => {
  const withdrawn: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW, paymentFailed: true },
  };
  const history = [created(), detected('t1', '300000000'), withdrawn];
  const remined = { ...paymentFixture('t1', '300000000'), blockNumber: 11, blockHash: '0xb10d' };
  // The removed block's own message again: still gone.
  t.deepEqual(given(history).when({ type: 'RecordTransfer', payment: paymentFixture('t1', '300000000') }, NOW), []);
  const events = given(history).when({ type: 'RecordTransfer', payment: remined }, NOW);
  t.deepEqual(events, [
    {
      type: 'PaymentDetected',
      data: { payment: { ...remined, status: 'pending', detectedAt: NOW, confirmedAt: null, late: false } },
    },
  ]);
  const again = [...history, ...events];
  t.deepEqual(
    given(again)
      .state()
      .context.session?.payments.map((p) => [p.transferId, p.status, p.blockHash]),
    [['t1', 'pending', '0xb10d']],
  );
  t.deepEqual(given(again).when({ type: 'RecordTransfer', payment: remined }, NOW), []);
  const done = given(again).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW);
  t.deepEqual(done, [confirmed('t1', NOW), completedEvent('300000000', '0', `0x${'t1'.padStart(64, '0')}`)]);
  t.is(given([...again, ...done]).state().context.session?.amountReceived, '300000000');
});

test('given a transfer withdrawn by a reorg, when its very block is final after all, then it is detected and confirmed again and completes the session once', (t) => {
  const withdrawn: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW, paymentFailed: true },
  };
  const history = [created(), detected('t1', '300000000'), withdrawn];
  const payment = paymentFixture('t1', '300000000');
  // Another block's final at that height proves nothing about this one.
  t.deepEqual(given(history).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10d' }, NOW), []);
  const events = given(history).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xB10C' }, NOW);
  t.deepEqual(events, [
    {
      type: 'PaymentDetected',
      data: { payment: { ...payment, status: 'pending', detectedAt: NOW, confirmedAt: null, late: false } },
    },
    confirmed('t1', NOW),
    completedEvent('300000000', '0', `0x${'t1'.padStart(64, '0')}`),
  ]);
  const after = [...history, ...events];
  const session = given(after).state().context.session;
  t.deepEqual(
    session?.payments.map((p) => [p.transferId, p.status]),
    [['t1', 'confirmed']],
  );
  t.like(session, { status: 'complete', amountReceived: '300000000', paymentIntent: { status: 'succeeded' } });
  // Counted once: the same final again, or the transfer's message again, changes nothing.
  t.deepEqual(given(after).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' }, NOW), []);
  t.deepEqual(given(after).when({ type: 'RecordTransfer', payment }, NOW), []);
  t.deepEqual(given(after).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW), []);
});

test('a reorg A→B→A: a transfer mined again in chain B and withdrawn with it is credited once by the final of its block in chain A, which it keeps among the blocks it was seen in', (t) => {
  const reorg = (at: string): CheckoutSessionEvent => ({
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at, mayReturn: true },
  });
  const inA = paymentFixture('t1', '300000000');
  const inB = { ...inA, blockNumber: 11, blockHash: '0xb10d' };
  const seenInB = given([created(), detected('t1', '300000000'), reorg(NOW)]).when(
    { type: 'RecordTransfer', payment: inB },
    NOW,
  );
  const history = [created(), detected('t1', '300000000'), reorg(NOW), ...seenInB, reorg(NOW)];
  t.deepEqual(given(history).state().context.session?.payments[0]?.seenIn, [{ number: 10, hash: '0xb10c' }]);
  // A's message again may be a stale one: A's final decides, as for the block it was last in.
  t.deepEqual(given(history).when({ type: 'RecordTransfer', payment: inA }, NOW), []);
  const events = given(history).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xB10C' }, NOW);
  t.deepEqual(events, [
    {
      type: 'PaymentDetected',
      data: { payment: { ...inA, status: 'pending', detectedAt: NOW, confirmedAt: null, late: false } },
    },
    confirmed('t1', NOW),
    completedEvent('300000000', '0', inA.transactionHash),
  ]);
  const after = [...history, ...events];
  t.like(given(after).state().context.session, {
    status: 'complete',
    amountReceived: '300000000',
    payments: [{ status: 'confirmed', blockHash: '0xb10c', seenIn: [{ number: 11, hash: '0xb10d' }] }],
  });
  for (const blockHash of ['0xb10c', '0xb10d'])
    t.deepEqual(given(after).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash }, NOW), []);
  t.deepEqual(given(after).when({ type: 'RecordTransfer', payment: inB }, NOW), []);
});

for (const { where, number } of [
  { where: 'at the same height', number: 10 },
  { where: 'at another height', number: 11 },
]) {
  test(`a missed reorg: a pending transfer delivered again in another block ${where}, no reorg before it, is in that block now and keeps the first among those it was seen in; the final of either confirms it there, once`, (t) => {
    const later = '2026-01-01T00:40:00.000Z';
    const inA = paymentFixture('t1', '300000000');
    const inB = { ...inA, blockNumber: number, blockHash: '0xb10d' };
    const history = [created(), detected('t1', '300000000')];
    const seenInB = given(history).when({ type: 'RecordTransfer', payment: inB }, later);
    t.deepEqual(seenInB, [
      {
        type: 'PaymentDetected',
        data: { payment: { ...inB, status: 'pending', detectedAt: later, confirmedAt: null, late: false } },
      },
    ]);
    const moved = [...history, ...seenInB];
    t.like(given(moved).state().context.session, {
      paymentIntent: { status: 'processing' },
      payments: [
        { status: 'pending', blockNumber: number, blockHash: '0xb10d', seenIn: [{ number: 10, hash: '0xb10c' }] },
      ],
    });
    const first = given(history).state().context.session?.payments[0]?.detectedAt;
    t.is(given(moved).state().context.session?.payments[0]?.detectedAt, first, 'first detected in A');
    // Either block's message again changes nothing: their finals decide.
    for (const payment of [inA, inB]) t.deepEqual(given(moved).when({ type: 'RecordTransfer', payment }, later), []);
    // Another block's final confirms nothing.
    t.deepEqual(given(moved).when({ type: 'ConfirmTransfer', transferId: 't1', blockHash: '0xb10e' }, later), []);
    // B canonical: confirmed in B.
    const inBFinal = given(moved).when({ type: 'ConfirmTransfer', transferId: 't1', blockHash: '0xB10D' }, later);
    t.deepEqual(
      inBFinal.map((e) => e.type),
      ['PaymentConfirmed', 'CheckoutSessionCompleted'],
    );
    t.like(given([...moved, ...inBFinal]).state().context.session, {
      status: 'complete',
      amountReceived: '300000000',
      payments: [{ status: 'confirmed', blockHash: '0xb10d' }],
    });
    // A canonical after all (the chain came back to it): confirmed in A, B kept among those it was seen in.
    const inAFinal = given(moved).when({ type: 'ConfirmTransfer', transferId: 't1', blockHash: '0xb10c' }, later);
    t.deepEqual(
      inAFinal.map((e) => e.type),
      ['PaymentDetected', 'PaymentConfirmed', 'CheckoutSessionCompleted'],
    );
    const after = [...moved, ...inAFinal];
    t.like(given(after).state().context.session, {
      status: 'complete',
      amountReceived: '300000000',
      payments: [{ status: 'confirmed', blockNumber: 10, blockHash: '0xb10c', seenIn: [{ number, hash: '0xb10d' }] }],
    });
    t.is(given(after).state().context.session?.payments[0]?.detectedAt, first);
    for (const blockHash of ['0xb10c', '0xb10d'])
      t.deepEqual(given(after).when({ type: 'ConfirmTransfer', transferId: 't1', blockHash }, later), []);
  });
}

test('a withdrawn transfer reinstated by its final after the session moved on counts as a new transfer would: overpayment once complete, late once expired', (t) => {
  const withdrawn: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW },
  };
  const reinstate = { type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' } as const;
  const completedByAnother = [
    created(),
    detected('t1', '100000000'),
    withdrawn,
    detected('t2', '300000000'),
    confirmed('t2'),
    completedEvent('300000000'),
  ];
  t.deepEqual(
    given(completedByAnother)
      .when(reinstate, NOW)
      .map((e) => e.type),
    ['PaymentDetected', 'PaymentConfirmed', 'OverpaymentReceived'],
  );
  const expiredWithIt = [
    created(),
    detected('t1', '300000000'),
    { ...withdrawn, data: { ...withdrawn.data, at: AFTER_EXPIRY, paymentFailed: true as const } },
    expired,
  ];
  const late = given(expiredWithIt).when(reinstate, AFTER_EXPIRY);
  t.deepEqual(
    late.map((e) => e.type),
    ['PaymentDetected', 'PaymentConfirmed', 'LatePaymentReceived'],
  );
  t.like(given([...expiredWithIt, ...late]).state().context.session, {
    status: 'expired',
    amountReceived: '300000000',
  });
});

test('a withdrawn transfer whose money a reconciliation credit counted since is recorded against the credit when its block is final, not counted twice', (t) => {
  const history = [
    created(),
    detected('t1', '300000000'),
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: NOW } } as const,
    {
      type: 'PaymentDetected',
      data: { payment: { ...credit, status: 'pending', detectedAt: NOW, confirmedAt: null, late: false } },
    } as const,
    confirmed('r1'),
    completedEvent('300000000', '0', null),
  ];
  const events = given(history).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' }, NOW);
  t.deepEqual(
    events.map((e) => e.type),
    ['TransferAlreadyReconciled'],
  );
  t.deepEqual(
    given([...history, ...events]).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' }, NOW),
    [],
  );
  t.is(given([...history, ...events]).state().context.session?.amountReceived, '300000000');
});

test('a pending or confirmed transfer is not reinstated: only a withdrawn one', (t) => {
  const reinstate = { type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' } as const;
  t.deepEqual(given([created(), detected('t1', '300000000')]).when(reinstate, NOW), []);
  t.deepEqual(given([created(), detected('t1', '300000000'), confirmed('t1')]).when(reinstate, NOW), []);
  t.deepEqual(given([created()]).when(reinstate, NOW), []);
});

test('given a confirmed transfer, when a reorg withdraws it, then nothing (finality is final)', (t) => {
  t.deepEqual(
    given([created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')]).when({
      type: 'WithdrawTransfer',
      transferId: 't1',
      reason: 'reorg',
    }),
    [],
  );
});

test('given an exact pending payment, when confirmed, then PaymentConfirmed and CheckoutSessionCompleted', (t) => {
  const events = given([created(), detected('1', '300000000')]).when({ type: 'ConfirmTransfer', transferId: '1' }, NOW);
  t.deepEqual(events, [confirmed('1', NOW), completedEvent('300000000', '0', `0x${'1'.padStart(64, '0')}`)]);
  const session = given([created(), detected('1', '300000000'), ...events]).state().context.session!;
  t.is(session.status, 'complete');
  t.is(session.paymentStatus, 'paid');
  t.is(session.paymentIntent.status, 'succeeded');
});

test('given a short payment, when confirmed, then the session is incomplete with the amount received', (t) => {
  const events = given([created(), detected('t1', '100000000')]).when(
    { type: 'ConfirmTransfer', transferId: 't1' },
    NOW,
  );
  t.deepEqual(
    events.map((e) => e.type),
    ['PaymentConfirmed', 'CheckoutSessionPartiallyPaid'],
  );
  const state = given([created(), detected('t1', '100000000'), ...events]).state();
  t.is(state.value, 'incomplete');
  t.is(state.context.session?.amountReceived, '100000000');
});

/** A 3.00 session paid 1.00, then a transfer '2' of `amount` detected. */
const partlyPaidThen = (amount: string): CheckoutSessionEvent[] => [
  created(),
  detected('t1', '100000000'),
  confirmed('t1'),
  { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: NOW } },
  detected('2', amount),
];

test('given an incomplete session, when the rest is confirmed, then it completes', (t) => {
  const history = partlyPaidThen('200000000');
  const events = given(history).when({ type: 'ConfirmTransfer', transferId: '2' }, NOW);
  t.deepEqual(
    events.map((e) => e.type),
    ['PaymentConfirmed', 'CheckoutSessionCompleted'],
  );
  t.is(given([...history, ...events]).state().context.session?.amountReceived, '300000000');
});

test('given an overpayment, when confirmed, then it completes, records the overpaid amount and reports it once as OverpaymentReceived', (t) => {
  const history = [created(), detected('t1', '350000000')];
  const events = given(history).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW);
  t.deepEqual(events, [
    confirmed('t1', NOW),
    completedEvent('350000000', '50000000', `0x${'t1'.padStart(64, '0')}`),
    {
      type: 'OverpaymentReceived',
      data: { transferId: 't1', amount: '350000000', amountOverpaid: '50000000', at: NOW },
    },
  ]);
  t.is(given([...history, ...events]).state().context.session?.amountOverpaid, '50000000');
});

test('given a partly paid session, when a transfer past the rest confirms, then it completes and OverpaymentReceived with the sum over', (t) => {
  const events = given(partlyPaidThen('250000000')).when({ type: 'ConfirmTransfer', transferId: '2' }, NOW);
  t.deepEqual(
    events.map((e) => e.type),
    ['PaymentConfirmed', 'CheckoutSessionCompleted', 'OverpaymentReceived'],
  );
  t.like(events[2], { data: { transferId: '2', amount: '250000000', amountOverpaid: '50000000' } });
});

test('a log from before: a completion past the total without its OverpaymentReceived replays to the same session', (t) => {
  const history = [created(), detected('t1', '350000000')];
  const completion = completedEvent('350000000', '50000000', `0x${'t1'.padStart(64, '0')}`);
  const old = given([...history, confirmed('t1', NOW), completion]);
  const now = given([...history, ...given(history).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW)]);
  t.deepEqual(old.state().context.session, now.state().context.session);
  t.true(old.state().matches('complete'));
});

test('given a complete session, when another payment confirms, then OverpaymentReceived', (t) => {
  const history = [
    created(),
    detected('t1', '300000000'),
    confirmed('t1'),
    completedEvent('300000000'),
    detected('t2', '10000000'),
  ];
  const events = given(history).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.deepEqual(
    events.map((e) => e.type),
    ['PaymentConfirmed', 'OverpaymentReceived'],
  );
  t.is(given([...history, ...events]).state().context.session?.amountOverpaid, '10000000');
});

test('an overpayment counts once its transfer is final: one withdrawn by a reorg while pending was never shown nor announced, so nothing goes back down; a confirmed one is past reorgs and stays', (t) => {
  const paid = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  // Pending (not final): nothing over yet, in the session or the log.
  const pending = [...paid, detected('t2', '10000000')];
  t.is(given(pending).state().context.session?.amountOverpaid, '0');
  const withdrawn = given(pending).when({ type: 'WithdrawTransfer', transferId: 't2', reason: 'reorg' }, NOW);
  t.deepEqual(
    withdrawn.map((e) => e.type),
    ['PaymentWithdrawn'],
  );
  t.is(given([...pending, ...withdrawn]).state().context.session?.amountOverpaid, '0');
  // Final: announced once; a reorg message naming it later changes nothing (the matcher withdraws pending transfers only).
  const over = given(pending).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.deepEqual(
    over.map((e) => e.type),
    ['PaymentConfirmed', 'OverpaymentReceived'],
  );
  for (const reason of ['reorg', NOT_IN_FINAL_BLOCK])
    t.deepEqual(given([...pending, ...over]).when({ type: 'WithdrawTransfer', transferId: 't2', reason }, NOW), []);
});

test('given an expired session, when a late payment confirms, then it is recorded and reported, and the session stays expired', (t) => {
  const history = [created(), expired, detected('t1', '300000000')];
  const events = given(history).when({ type: 'ConfirmTransfer', transferId: 't1' }, AFTER_EXPIRY);
  t.deepEqual(
    events.map((e) => e.type),
    ['PaymentConfirmed', 'LatePaymentReceived'],
  );
  const state = given([...history, ...events]).state();
  t.is(state.value, 'expired');
  t.is(state.context.session?.amountReceived, '300000000');
  t.true(state.context.session?.payments[0]?.late);
});

test('given a canceled session, when a late payment confirms, then LatePaymentReceived', (t) => {
  const canceled: CheckoutSessionEvent = { type: 'CheckoutSessionCanceled', data: { at: NOW, reason: null } };
  t.deepEqual(
    given([created(), canceled, detected('t1', '1')])
      .when({ type: 'ConfirmTransfer', transferId: 't1' })
      .map((e) => e.type),
    ['PaymentConfirmed', 'LatePaymentReceived'],
  );
});

test('given an open session at its expiry time, when the timer fires, then CheckoutSessionExpired and the intent is canceled', (t) => {
  const events = given([created()]).when({ type: 'ExpireCheckoutSession' }, AFTER_EXPIRY);
  t.deepEqual(events, [expired]);
  const session = given([created(), ...events]).state().context.session!;
  t.is(session.status, 'expired');
  t.is(session.paymentIntent.status, 'canceled');
});

test('given an open session before its expiry time, when the timer fires early, then nothing', (t) => {
  t.deepEqual(given([created()]).when({ type: 'ExpireCheckoutSession' }, '2026-01-01T00:59:59.999Z'), []);
});

test('given an incomplete, complete or already expired session, when the timer fires, then nothing', (t) => {
  const partial: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '1', at: NOW },
  };
  t.deepEqual(
    given([created(), detected('t1', '1'), confirmed('t1'), partial]).when(
      { type: 'ExpireCheckoutSession' },
      AFTER_EXPIRY,
    ),
    [],
  );
  t.deepEqual(
    given([created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')]).when(
      { type: 'ExpireCheckoutSession' },
      AFTER_EXPIRY,
    ),
    [],
  );
  t.deepEqual(given([created(), expired]).when({ type: 'ExpireCheckoutSession' }, AFTER_EXPIRY), []);
});

test('given an open session, when canceled, then CheckoutSessionCanceled; canceling again changes nothing', (t) => {
  const events = given([created()]).when({ type: 'CancelCheckoutSession', reason: 'payer left' }, NOW);
  t.deepEqual(events, [{ type: 'CheckoutSessionCanceled', data: { at: NOW, reason: 'payer left' } }]);
  t.deepEqual(given([created(), ...events]).when({ type: 'CancelCheckoutSession', reason: null }), []);
});

test("given a session with a payment confirming and one awaited back after a reorg, when canceled, then both are marked seen before the cancel, in the log's order: one seen after it in the same millisecond is not; mined again after the cancel, the awaited one keeps its mark, which no event carries", (t) => {
  const withdrawn: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't2', reason: 'reorg', at: NOW, mayReturn: true },
  };
  const history = [created(), detected('t1', '300000000', NOW), detected('t2', '100000000'), withdrawn];
  const cancel = given(history).when({ type: 'CancelCheckoutSession', reason: null }, NOW);
  const afterCancel = [...history, ...cancel, detected('t3', '100000000', NOW)];
  const marks = () =>
    given(afterCancel)
      .state()
      .context.session?.payments.map((p) => [p.transferId, p.status, p.seenBeforeClose ?? false]);
  t.deepEqual(marks(), [
    ['t1', 'pending', true],
    ['t2', 'withdrawn', true],
    ['t3', 'pending', false],
  ]);
  const remined = { ...paymentFixture('t2', '100000000'), blockNumber: 11, blockHash: '0xb10d' };
  const again = given(afterCancel).when({ type: 'RecordTransfer', payment: remined }, NOW);
  t.is(again.length, 1);
  t.false(JSON.stringify(again).includes('seenBeforeClose'), 'the mark is the fold’s, not the event’s');
  afterCancel.push(...again);
  t.deepEqual(marks(), [
    ['t1', 'pending', true],
    ['t2', 'pending', true],
    ['t3', 'pending', false],
  ]);
  // Final after the cancel: late money, still marked.
  afterCancel.push(...given(afterCancel).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW));
  t.like(given(afterCancel).state().context.session?.payments[0], { late: true, seenBeforeClose: true });
});

test('given a complete session, when canceled, then refused naming the status', (t) => {
  const error = t.throws(
    () =>
      given([created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')]).when({
        type: 'CancelCheckoutSession',
        reason: null,
      }),
    { instanceOf: InvalidStateError },
  );
  t.regex(error.message, /complete/);
});

test('given an incomplete session, when the merchant completes it as is, then a partial completion', (t) => {
  const partial: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '100000000', at: NOW },
  };
  const events = given([created(), detected('t1', '100000000'), confirmed('t1'), partial]).when(
    { type: 'CompletePartialCheckoutSession' },
    NOW,
  );
  t.is(events.length, 1);
  t.like(events[0]!.data, { partial: true, amountReceived: '100000000' });
  t.false('reason' in events[0]!.data, 'the merchant’s completion names no reason');
  const bySystem = given([created(), detected('t1', '100000000'), confirmed('t1'), partial]).when(
    { type: 'CompletePartialCheckoutSession', reason: 'the invoice was marked as paid' },
    NOW,
  );
  t.like(bySystem[0]!.data, { partial: true, amountReceived: '100000000', reason: 'the invoice was marked as paid' });
});

test('given a session completed as partly paid, when more money confirms, then a late payment up to the total and an overpayment only past it, never a negative amountOverpaid', (t) => {
  const partial: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '100000000', at: NOW },
  };
  const short = [created(), detected('t1', '100000000'), confirmed('t1'), partial];
  const completed = given(short).when({ type: 'CompletePartialCheckoutSession' }, NOW);
  const closed = [...short, ...completed, detected('t2', '50000000')];
  const late = given(closed).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.deepEqual(
    late.map((e) => e.type),
    ['PaymentConfirmed', 'LatePaymentReceived'],
  );
  t.is(given([...closed, ...late]).state().context.session?.amountOverpaid, '0');
  // 100 + 50 + 200 of a 300 total: 50 over.
  const beyond = [...closed, ...late, detected('t3', '200000000')];
  const over = given(beyond).when({ type: 'ConfirmTransfer', transferId: 't3' }, NOW);
  t.deepEqual(
    over.map((e) => e.type),
    ['PaymentConfirmed', 'OverpaymentReceived'],
  );
  t.is(given([...beyond, ...over]).state().context.session?.amountOverpaid, '50000000');
});

test('a log from before: money after a session completed short, recorded as an OverpaymentReceived with a negative excess, replays as a late payment, amountOverpaid left at 0', (t) => {
  const partial: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '100000000', at: NOW },
  };
  const short = [created(), detected('t1', '100000000'), confirmed('t1'), partial];
  const completed = given(short).when({ type: 'CompletePartialCheckoutSession' }, NOW);
  const recorded: CheckoutSessionEvent = {
    type: 'OverpaymentReceived',
    data: { transferId: 't2', amount: '50000000', amountOverpaid: '-150000000', at: NOW },
  };
  const session = given([...short, ...completed, detected('t2', '50000000'), confirmed('t2'), recorded]).state().context
    .session;
  t.is(session?.amountOverpaid, '0');
  t.true(session?.payments.find((p) => p.transferId === 't2')?.late);
});

test('given an incomplete (partly paid) session, when canceled, then refused naming the way out: complete it with the amount received', (t) => {
  const partial: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '100000000', at: NOW },
  };
  const history = [created(), detected('t1', '100000000'), confirmed('t1'), partial];
  const error = t.throws(() => given(history).when({ type: 'CancelCheckoutSession', reason: null }), {
    instanceOf: InvalidStateError,
  });
  t.is(error.statusCode, 400);
  t.regex(error.message, /incomplete.*cannot be canceled/);
  t.regex(error.message, /\/api\/v1\/checkout\/sessions\/[^/]+\/complete-partial-checkout-session/);
});

test('given an open session, when the merchant completes it as partial, then refused', (t) => {
  t.throws(() => given([created()]).when({ type: 'CompletePartialCheckoutSession' }), {
    instanceOf: InvalidStateError,
    message: /open/,
  });
});

test('given no session, when any other command arrives, then refused', (t) => {
  t.throws(() => given([]).when({ type: 'ExpireCheckoutSession' }), { instanceOf: InvalidStateError });
});

test('the machine refuses facts its state cannot take', (t) => {
  t.throws(() => given([created(), created()]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), expired, completedEvent('1')]).state(), { instanceOf: IllegalEventError });
  t.throws(
    () =>
      given([
        created(),
        { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '1', at: NOW } },
        expired,
      ]).state(),
    { instanceOf: IllegalEventError },
  );
  t.throws(() => given([detected('t1', '1')]).state(), { instanceOf: IllegalEventError });
});

test('given confirmed payments, when a sweep is recorded, then FundsSwept for the confirmed, unswept transfers only; a repeat changes nothing', (t) => {
  const history = [
    created(),
    detected('t1', '300000000'),
    confirmed('t1'),
    completedEvent('300000000'),
    detected('t2', '1'),
  ];
  const sweep = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xswept',
    transferIds: ['t1', 't2', 'unknown'],
    gasUsed: '60000',
    gasCost: '600000000000000',
  };
  const events = given(history).when({ type: 'RecordSweep', sweep }, NOW);
  t.deepEqual(events, [
    { type: 'FundsSwept', data: { sweep: { ...sweep, transferIds: ['t1'], moved: usdcMoved('3000000'), at: NOW } } },
  ]);
  t.is(given([...history, ...events]).state().context.session?.sweeps.length, 1);
  t.deepEqual(given([...history, ...events]).when({ type: 'RecordSweep', sweep }), []);
});

test('given a sweep transaction mined but reverted, when it is recorded, then FundsSwept with its gas and no transfers, once per transaction', (t) => {
  const history = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  const sweep = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xreverted',
    transferIds: ['t1'],
    gasUsed: '30000',
    gasCost: '300000000000000',
    reverted: true,
  };
  const events = given(history).when({ type: 'RecordSweep', sweep }, NOW);
  t.deepEqual(events, [{ type: 'FundsSwept', data: { sweep: { ...sweep, transferIds: [], at: NOW } } }]);
  t.deepEqual(given([...history, ...events]).when({ type: 'RecordSweep', sweep }), []);
  // The transfer is still to sweep.
  const swept = { ...sweep, transactionHash: '0xswept', reverted: undefined };
  t.deepEqual(given([...history, ...events]).when({ type: 'RecordSweep', sweep: swept }, NOW)[0]?.data, {
    sweep: { ...swept, transferIds: ['t1'], moved: usdcMoved('3000000'), at: NOW },
  });
});

test('given a sweep broadcast, when it is recorded mined, then FundsSwept ends it, with its gas even if it swept nothing new; once only', (t) => {
  const history = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  const broadcast = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xsent',
    transferIds: ['t1'],
    share: { index: 1, count: 2 },
  };
  const sent = given(history).when({ type: 'RecordSweepBroadcast', broadcast }, NOW);
  t.deepEqual(sent, [{ type: 'SweepBroadcast', data: { broadcast: { ...broadcast, at: NOW } } }]);
  t.deepEqual(
    given([...history, ...sent]).when({ type: 'RecordSweepBroadcast', broadcast }),
    [],
    'a repeat changes nothing',
  );
  t.deepEqual(given([...history, ...sent]).state().context.session?.sweepsBroadcast, [{ ...broadcast, at: NOW }]);
  // t1 was swept meanwhile by another transaction: the broadcast one still records its gas.
  const other = {
    type: 'FundsSwept' as const,
    data: {
      sweep: {
        network: 'weir-testnet',
        chainId: 7357,
        transactionHash: '0xother',
        transferIds: ['t1'],
        gasUsed: '1',
        gasCost: '1',
        at: NOW,
      },
    },
  };
  const sweep = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xsent',
    transferIds: ['t1'],
    gasUsed: '30000',
    gasCost: '300000000000000',
  };
  const swept = given([...history, ...sent, other]).when({ type: 'RecordSweep', sweep }, NOW);
  t.deepEqual(swept, [{ type: 'FundsSwept', data: { sweep: { ...sweep, transferIds: [], moved: [], at: NOW } } }]);
  const after = [...history, ...sent, other, ...swept];
  t.deepEqual(given(after).state().context.session?.sweepsBroadcast, []);
  t.deepEqual(given(after).when({ type: 'RecordSweep', sweep }), [], 'recorded once');
  t.deepEqual(
    given(after).when({ type: 'RecordSweepBroadcast', broadcast }),
    [],
    'a transaction recorded mined is not broadcast again',
  );
  t.deepEqual(
    given(after).when({ type: 'DropSweepBroadcast', network: 'weir-testnet', transactionHash: '0xsent' }),
    [],
  );
});

test('given a sweep broadcast, when a repriced copy of it is recorded mined in its place, then FundsSwept with the copy ends the broadcast too, even if it swept nothing new', (t) => {
  const share = { index: 0, count: 1 };
  const broadcastOf = (transactionHash: string): CheckoutSessionEvent => ({
    type: 'SweepBroadcast',
    data: {
      broadcast: { network: 'weir-testnet', chainId: 7357, transactionHash, transferIds: ['t1'], share, at: NOW },
    },
  });
  const sweptOf = (transactionHash: string, transferIds: string[], replaces?: string) => ({
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash,
    transferIds,
    gasUsed: '30000',
    gasCost: '600000000000000',
    ...(replaces === undefined ? {} : { replaces }),
  });
  const paid = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  const history = [...paid, broadcastOf('0xsent')];
  const sweep = sweptOf('0xcopy', ['t1'], '0xsent');
  const swept = given(history).when({ type: 'RecordSweep', sweep }, NOW);
  t.deepEqual(swept, [{ type: 'FundsSwept', data: { sweep: { ...sweep, moved: usdcMoved('3000000'), at: NOW } } }]);
  t.deepEqual(given([...history, ...swept]).state().context.session?.sweepsBroadcast, []);
  // t1 swept meanwhile by another transaction: the copy still records its gas, as the broadcast would.
  const other: CheckoutSessionEvent = {
    type: 'FundsSwept',
    data: { sweep: { ...sweptOf('0xother', ['t1']), at: NOW } },
  };
  t.deepEqual(given([...history, other]).when({ type: 'RecordSweep', sweep }, NOW), [
    { type: 'FundsSwept', data: { sweep: { ...sweep, transferIds: [], moved: [], at: NOW } } },
  ]);
});

test('given a sweep broadcast dropped as not mined in time, when it is found mined later, then FundsSwept with its gas even if its transfers were swept meanwhile; once only; a copy of it recorded in place of the re-flush then drops the re-flush', (t) => {
  const share = { index: 0, count: 1 };
  const broadcastOf = (transactionHash: string): CheckoutSessionEvent => ({
    type: 'SweepBroadcast',
    data: {
      broadcast: { network: 'weir-testnet', chainId: 7357, transactionHash, transferIds: ['t1'], share, at: NOW },
    },
  });
  const sweptOf = (transactionHash: string, transferIds: string[], replaces?: string) => ({
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash,
    transferIds,
    gasUsed: '30000',
    gasCost: '600000000000000',
    ...(replaces === undefined ? {} : { replaces }),
  });
  const paid = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  const dropped: CheckoutSessionEvent = {
    type: 'SweepDropped',
    data: { network: 'weir-testnet', transactionHash: '0xfirst', at: NOW },
  };
  const reflushed = [...paid, broadcastOf('0xfirst'), dropped, broadcastOf('0xagain')];
  // The re-flush, mined at the next nonce, was recorded first with the transfer.
  const again = given(reflushed).when({ type: 'RecordSweep', sweep: sweptOf('0xagain', ['t1']) }, NOW);
  t.is(again.length, 1);
  const late = sweptOf('0xfirst', ['t1']);
  const lateSwept = given([...reflushed, ...again]).when({ type: 'RecordSweep', sweep: late }, NOW);
  t.deepEqual(lateSwept, [{ type: 'FundsSwept', data: { sweep: { ...late, transferIds: [], moved: [], at: NOW } } }]);
  t.deepEqual(given([...reflushed, ...again, ...lateSwept]).when({ type: 'RecordSweep', sweep: late }), [], 'once');
  t.deepEqual(
    given([...paid, broadcastOf('0xother')]).when({ type: 'RecordSweep', sweep: sweptOf('0xfirst', []) }),
    [],
    'a transaction neither broadcast nor dropped for the session records nothing on it',
  );

  // The dropped one mined with the re-flush's nonce, found first: recorded on its own, then again
  // as the copy mined in the re-flush's place, which ends the re-flush, never mined.
  const first = given(reflushed).when({ type: 'RecordSweep', sweep: late }, NOW);
  t.deepEqual(first, [{ type: 'FundsSwept', data: { sweep: { ...late, moved: usdcMoved('3000000'), at: NOW } } }]);
  const copy = sweptOf('0xfirst', ['t1'], '0xagain');
  const ended = given([...reflushed, ...first]).when({ type: 'RecordSweep', sweep: copy }, NOW);
  t.deepEqual(ended, [
    { type: 'SweepDropped', data: { network: 'weir-testnet', transactionHash: '0xagain', at: NOW } },
  ]);
  const after = given([...reflushed, ...first, ...ended]);
  t.deepEqual(after.state().context.session?.sweepsBroadcast, []);
  t.is(after.state().context.session?.sweeps.length, 1);
  t.deepEqual(after.when({ type: 'RecordSweep', sweep: copy }), []);
});

test('given a transfer confirmed after a sweep of its deposit mined in a later block was recorded, then it is found moved by that sweep (a flush sends the whole balance), with its amount; not one in the same block unless the deposit is read empty, nor one mined after, of another asset or to another address', (t) => {
  const DEPOSIT = '0x00000000000000000000000000000000000D3B05';
  const detectedIn = (transferId: string, amount: string, blockNumber: number, change = {}): CheckoutSessionEvent => ({
    type: 'PaymentDetected',
    data: {
      payment: {
        ...paymentFixture(transferId, amount),
        blockNumber,
        ...change,
        status: 'pending',
        detectedAt: NOW,
        confirmedAt: null,
        late: false,
      },
    },
  });
  const sweepIn = (blockNumber: number, extra = {}) => ({
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xswept',
    blockNumber,
    depositAddress: DEPOSIT,
    merchantAddress: '0xmerchant',
    transferIds: ['t1'],
    gasUsed: '1',
    gasCost: '1',
    ...extra,
  });
  const paid = [created(), detectedIn('t1', '100000000', 10), confirmed('t1')];
  const sweptIn = (blockNumber: number, extra = {}) =>
    given(paid).when({ type: 'RecordSweep', sweep: sweepIn(blockNumber, extra) }, NOW);
  const found = (transferIds: string[], amountRaw: string, blockNumber = 20) => ({
    type: 'TransfersFoundSwept',
    data: {
      network: 'weir-testnet',
      transactionHash: '0xswept',
      blockNumber,
      depositAddress: DEPOSIT,
      transferIds,
      moved: usdcMoved(amountRaw),
      at: NOW,
    },
  });
  const assets = { assets: ['0x00000000000000000000000000000000000a11ce'] };

  // Mined in block 12, the sweep in 20: found moved by it when confirmed.
  const history = [...paid, ...sweptIn(20, assets), detectedIn('t2', '200000000', 12)];
  const events = given(history).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.deepEqual(events.at(-1), found(['t2'], '2000000'));
  const sweeps = given([...history, ...events]).state().context.session?.sweeps;
  t.deepEqual(
    sweeps?.map((s) => [s.transactionHash, s.transferIds, s.moved]),
    [['0xswept', ['t1', 't2'], usdcMoved('3000000')]],
    'the sweep moved both',
  );
  t.deepEqual(
    given([...history, ...events]).when({
      type: 'FindSweptTransfers',
      network: 'weir-testnet',
      depositAddress: DEPOSIT,
    }),
    [],
  );
  t.deepEqual(
    given([...history, ...events]).when({
      type: 'RecordSweep',
      sweep: { ...sweepIn(30), transactionHash: '0xnext', transferIds: ['t2'] },
    }),
    [],
    'never swept twice',
  );

  // In the sweep's block, it may have come after it: found only once the deposit is read empty.
  const sameBlock = [...paid, ...sweptIn(20, assets), detectedIn('t2', '200000000', 20)];
  const confirmedThen = given(sameBlock).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.false(confirmedThen.some((e) => e.type === 'TransfersFoundSwept'));
  const readEmpty = {
    type: 'FindSweptTransfers',
    network: 'weir-testnet',
    depositAddress: DEPOSIT.toLowerCase(),
  } as const;
  t.deepEqual(given([...sameBlock, ...confirmedThen]).when(readEmpty, NOW), [found(['t2'], '2000000')]);

  // Mined after the sweep (someone else's flush emptied the deposit), another asset, another address: not Weir's sweep's.
  for (const [what, payment, sweep] of [
    ['mined after', detectedIn('t2', '200000000', 21), sweptIn(20, assets)],
    [
      'another asset',
      detectedIn('t2', '200000000', 12, { asset: { ...paymentFixture('x', '1').asset, address: '0xda1' } }),
      sweptIn(20, assets),
    ],
    ['another address', detectedIn('t2', '200000000', 12, { toAddress: '0xelsewhere' }), sweptIn(20, assets)],
    ['a reverted sweep', detectedIn('t2', '200000000', 12), sweptIn(20, { ...assets, reverted: true })],
  ] as const) {
    const before = [...paid, ...sweep, payment];
    const confirmedNow = given(before).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
    t.false(
      confirmedNow.some((e) => e.type === 'TransfersFoundSwept'),
      what,
    );
    t.deepEqual(given([...before, ...confirmedNow]).when(readEmpty, NOW), [], what);
  }

  // A sweep recorded before `assets` and `moved` were kept (an old log): its transfers' asset was
  // flushed; the session's sweep keeps no amount it never had.
  const old: CheckoutSessionEvent = { type: 'FundsSwept', data: { sweep: { ...sweepIn(20), at: NOW } } };
  const oldHistory = [...paid, old, detectedIn('t2', '200000000', 12)];
  const oldEvents = given(oldHistory).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.deepEqual(oldEvents.at(-1), found(['t2'], '2000000'));
  t.deepEqual(given([...oldHistory, ...oldEvents]).state().context.session?.sweeps, [
    { ...sweepIn(20), transferIds: ['t1', 't2'], at: NOW },
  ]);
});

test('given a sweep recorded mined, then the transfers confirmed while it was in flight that were mined before it are recorded moved by it', (t) => {
  const history = [
    created(),
    detected('t1', '100000000'),
    confirmed('t1'),
    {
      ...detected('t2', '200000000'),
      data: {
        payment: {
          ...paymentFixture('t2', '200000000'),
          blockNumber: 15,
          status: 'pending',
          detectedAt: NOW,
          confirmedAt: null,
          late: false,
        },
      },
    } as CheckoutSessionEvent,
    confirmed('t2'),
  ];
  const sweep = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xswept',
    blockNumber: 20,
    depositAddress: '0x00000000000000000000000000000000000d3b05',
    merchantAddress: '0xmerchant',
    transferIds: ['t1'],
    assets: ['0x00000000000000000000000000000000000a11ce'],
    gasUsed: '1',
    gasCost: '1',
  };
  t.deepEqual(given(history).when({ type: 'RecordSweep', sweep }, NOW), [
    {
      type: 'FundsSwept',
      data: { sweep: { ...sweep, transferIds: ['t1', 't2'], moved: usdcMoved('3000000'), at: NOW } },
    },
  ]);
  // Mined in its block, maybe after it: left for the next sweep (or found once the deposit is read empty).
  t.deepEqual(given(history).when({ type: 'RecordSweep', sweep: { ...sweep, blockNumber: 15 } }, NOW)[0]?.data, {
    sweep: { ...sweep, blockNumber: 15, transferIds: ['t1'], moved: usdcMoved('1000000'), at: NOW },
  });
});

test('given a sweep broadcast recorded with its signed transaction, then the log keeps it and the session (and its API) does not', (t) => {
  const history = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  const broadcast = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xsent',
    transferIds: ['t1'],
    share: { index: 0, count: 1 },
    signedTransaction: '0x02f8',
  };
  const sent = given(history).when({ type: 'RecordSweepBroadcast', broadcast }, NOW);
  t.deepEqual(sent, [{ type: 'SweepBroadcast', data: { broadcast: { ...broadcast, at: NOW } } }]);
  const { signedTransaction: _signed, ...onTheSession } = broadcast;
  t.deepEqual(given([...history, ...sent]).state().context.session?.sweepsBroadcast, [{ ...onTheSession, at: NOW }]);
});

test('given a sweep broadcast never mined, when it is dropped, then SweepDropped ends it, once; a session recorded before broadcasts existed reads as before', (t) => {
  const history = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  t.is(given(history).state().context.session?.sweepsBroadcast, undefined);
  const broadcast = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xsent',
    transferIds: ['t1'],
    share: { index: 0, count: 1 },
  };
  const sent = given(history).when({ type: 'RecordSweepBroadcast', broadcast }, NOW);
  const dropped = given([...history, ...sent]).when(
    { type: 'DropSweepBroadcast', network: 'weir-testnet', transactionHash: '0xsent' },
    NOW,
  );
  t.deepEqual(dropped, [
    { type: 'SweepDropped', data: { network: 'weir-testnet', transactionHash: '0xsent', at: NOW } },
  ]);
  t.deepEqual(given([...history, ...sent, ...dropped]).state().context.session?.sweepsBroadcast, []);
  t.deepEqual(
    given([...history, ...sent, ...dropped]).when({
      type: 'DropSweepBroadcast',
      network: 'weir-testnet',
      transactionHash: '0xsent',
    }),
    [],
  );
  // The transfer is still to sweep, by a new transaction.
  const sweep = {
    network: 'weir-testnet',
    chainId: 7357,
    transactionHash: '0xnew',
    transferIds: ['t1'],
    gasUsed: '1',
    gasCost: '1',
  };
  t.deepEqual(given([...history, ...sent, ...dropped]).when({ type: 'RecordSweep', sweep }, NOW)[0]?.data, {
    sweep: { ...sweep, transferIds: ['t1'], moved: usdcMoved('3000000'), at: NOW },
  });
});

test('given gas collection on, when the payer picks an asset, then its sweep gas is added to the amount due and the total', (t) => {
  const session = sessionFixture();
  const withGas = {
    ...session,
    addresses: session.addresses.map((a) => ({ ...a, gas: '150000', gasAmount: '2500000' })),
  };
  const events = given([created(withGas)]).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW);
  t.deepEqual(events, [
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '3025000', amountGasFee: '2500000', at: NOW },
    },
  ]);
  const chosen = given([created(withGas), ...events]).state().context.session!;
  t.is(chosen.amountTotal, '302500000');
  t.is(chosen.amountDetails.amountGasFee, '2500000');
  t.true(chosen.amountDetails.applyGasFee);
  t.is(chosen.paymentIntent.amount, '302500000');
  // Paying only the goods leaves it incomplete; the gas fee completes it.
  const partial = given([created(withGas), ...events, detected('t1', '300000000')]).when(
    { type: 'ConfirmTransfer', transferId: 't1' },
    NOW,
  );
  t.is(partial[1]!.type, 'CheckoutSessionPartiallyPaid');
});

/** The fixture's 3 USDC with gas collection on: USDC whose sweep costs 14.40, and another asset (as on Solana or Tron) whose costs nothing. */
function gasSession(cheapGas = '0') {
  const base = sessionFixture();
  const usdc = { ...base.addresses[0]!, gas: '160000', gasAmount: '1440000000' };
  const other = {
    ...usdc,
    id: 'addr-other',
    network: 'weir-other',
    asset: { ...usdc.asset, id: 'weir-other:usdc', chainId: 99 },
    gas: cheapGas === '0' ? '0' : '10000',
    gasAmount: cheapGas,
  };
  return sessionFixture({ addresses: [usdc, other] });
}
/** `amount` (10^8) of USDC seen at the other asset's address. */
const otherDetected = (transferId: string, amount: string): CheckoutSessionEvent => ({
  type: 'PaymentDetected',
  data: {
    payment: {
      ...paymentFixture(transferId, amount),
      network: 'weir-other',
      chainId: 99,
      asset: { ...paymentFixture(transferId, amount).asset, id: 'weir-other:usdc', chainId: 99 },
      status: 'pending',
      detectedAt: NOW,
      confirmedAt: null,
      late: false,
    },
  },
});
/** `events` and what `command` decides after them, at NOW. */
const then = (events: CheckoutSessionEvent[], command: CheckoutSessionCommand): CheckoutSessionEvent[] => [
  ...events,
  ...given(events).when(command, NOW),
];

test('given 10 of 17.40 paid into USDC whose sweep gas is charged, when the payer switches to an asset with no gas, then that sweep stays owed: the total stays 17.40 and the rest 7.40, never a total below what came (stuck incomplete)', (t) => {
  const chosen = then([created(gasSession())], { type: 'SelectPaymentMethod', addressId: 'addr-usdc' });
  t.is(given(chosen).state().context.session!.amountTotal, '1740000000');
  const partly = then([...chosen, detected('t1', '1000000000')], { type: 'ConfirmTransfer', transferId: 't1' });
  t.is(given(partly).state().value, 'incomplete');
  t.deepEqual(given(partly).when({ type: 'SelectPaymentMethod', addressId: 'addr-other' }, NOW), [
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-other', amountDue: '7400000', amountGasFee: '1440000000', at: NOW },
    },
  ]);
  const switched = then(partly, { type: 'SelectPaymentMethod', addressId: 'addr-other' });
  t.like(given(switched).state().context.session!, {
    status: 'incomplete',
    amountTotal: '1740000000',
    amountGasFee: '1440000000',
    amountReceived: '1000000000',
  });
  // The rest in the other asset completes it, nothing over.
  const rest = then([...switched, otherDetected('t2', '740000000')], { type: 'ConfirmTransfer', transferId: 't2' });
  t.like(given(rest).state().context.session!, {
    status: 'complete',
    amountReceived: '1740000000',
    amountOverpaid: '0',
  });
  // Back to USDC: its own gas is counted once, not twice.
  t.deepEqual(
    given(switched)
      .when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW)
      .map((e) => e.type === 'PaymentMethodSelected' && e.data.amountGasFee),
    ['1440000000'],
  );
});

test('given part paid into one asset with sweep gas, when the payer switches to a cheaper one with gas of its own, then both sweeps are charged: each deposit is swept on its own', (t) => {
  const chosen = then([created(gasSession('100000000'))], { type: 'SelectPaymentMethod', addressId: 'addr-usdc' });
  const partly = then([...chosen, detected('t1', '1000000000')], { type: 'ConfirmTransfer', transferId: 't1' });
  t.deepEqual(given(partly).when({ type: 'SelectPaymentMethod', addressId: 'addr-other' }, NOW), [
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-other', amountDue: '8400000', amountGasFee: '1540000000', at: NOW },
    },
  ]);
  // A payment still confirming there is money arrived too: its sweep is owed as well.
  const confirming = then(chosen, { type: 'RecordTransfer', payment: paymentFixture('t1', '1000000000') });
  t.deepEqual(
    given(confirming)
      .when({ type: 'SelectPaymentMethod', addressId: 'addr-other' }, NOW)
      .map((e) => e.type === 'PaymentMethodSelected' && e.data.amountGasFee),
    ['1540000000'],
  );
  // Chosen and never paid into, its sweep is not owed: the other asset alone is charged.
  t.deepEqual(
    given(chosen)
      .when({ type: 'SelectPaymentMethod', addressId: 'addr-other' }, NOW)
      .map((e) => e.type === 'PaymentMethodSelected' && e.data.amountGasFee),
    ['100000000'],
  );
});

test('given a session partly paid (its money at an asset with no gas, the chosen one charging 14.40), when the payer picks the asset that money came in, then nothing is owed any more and the session completes in the same decision, the excess recorded as an overpayment', (t) => {
  const chosen = then([created(gasSession())], { type: 'SelectPaymentMethod', addressId: 'addr-usdc' });
  const partly = then([...chosen, otherDetected('t1', '1000000000')], { type: 'ConfirmTransfer', transferId: 't1' });
  t.is(given(partly).state().value, 'incomplete');
  const picked = given(partly).when({ type: 'SelectPaymentMethod', addressId: 'addr-other' }, NOW);
  t.deepEqual(picked, [
    { type: 'PaymentMethodSelected', data: { addressId: 'addr-other', amountDue: '0', amountGasFee: '0', at: NOW } },
    completedEvent('1000000000', '700000000', `0x${'t1'.padStart(64, '0')}`),
    {
      type: 'OverpaymentReceived',
      data: { transferId: 't1', amount: '1000000000', amountOverpaid: '700000000', at: NOW },
    },
  ]);
  t.like(given([...partly, ...picked]).state().context.session!, {
    status: 'complete',
    amountTotal: '300000000',
    amountOverpaid: '700000000',
  });
  // Exactly the goods received: complete, nothing over.
  const exact = then([...chosen, otherDetected('t1', '300000000')], { type: 'ConfirmTransfer', transferId: 't1' });
  t.deepEqual(given(exact).when({ type: 'SelectPaymentMethod', addressId: 'addr-other' }, NOW).slice(1), [
    completedEvent('300000000', '0', `0x${'t1'.padStart(64, '0')}`),
  ]);
  // The session no longer expires nor takes another choice.
  const done = [...partly, ...picked];
  t.deepEqual(given(done).when({ type: 'ExpireCheckoutSession' }, AFTER_EXPIRY), []);
  t.throws(() => given(done).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW), {
    instanceOf: InvalidStateError,
  });
});

test('a log from before: a switch after part was paid that dropped the gas fee (incomplete with more received than its total) replays to the same session', (t) => {
  const chosen = then([created(gasSession())], { type: 'SelectPaymentMethod', addressId: 'addr-usdc' });
  const partly = then([...chosen, detected('t1', '1000000000')], { type: 'ConfirmTransfer', transferId: 't1' });
  const before: CheckoutSessionEvent = {
    type: 'PaymentMethodSelected',
    data: { addressId: 'addr-other', amountDue: '0', amountGasFee: '0', at: NOW },
  };
  t.like(given([...partly, before]).state().context.session!, {
    status: 'incomplete',
    amountTotal: '300000000',
    amountGasFee: '0',
    amountReceived: '1000000000',
  });
});

test('given an open session that allows promotion codes, when a discount is applied, then the total drops; the same code again changes nothing; another is refused', (t) => {
  const session = { ...sessionFixture(), allowPromotionCodes: true };
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'LAUNCH', amountDiscount: '30000000' };
  const events = given([created(session)]).when({ type: 'ApplyDiscount', discount }, NOW);
  t.deepEqual(events, [{ type: 'DiscountApplied', data: { discount: { ...discount, at: NOW } } }]);
  const applied = given([created(session), ...events]).state().context.session!;
  t.is(applied.amountTotal, '270000000');
  t.is(applied.amountDetails.amountDiscount, '30000000');
  // The amount names its coupon itself, as the reference's discountAmounts[].couponId does.
  t.deepEqual(applied.amountDetails.discountAmounts, [{ amount: '30000000', couponId: 'c1', promotionCodeId: 'p1' }]);
  t.is(applied.paymentIntent.amount, '270000000');
  t.deepEqual(given([created(session), ...events]).when({ type: 'ApplyDiscount', discount }), []);
  t.throws(
    () =>
      given([created(session), ...events]).when({
        type: 'ApplyDiscount',
        discount: { ...discount, promotionCodeId: 'p2', code: 'OTHER' },
      }),
    { instanceOf: ValidationError },
  );
});

test('given an open session, when a discount takes the whole total off (a 100% coupon), then it is completed at once with nothing received, like an invoice with nothing to pay', (t) => {
  const session = { ...sessionFixture(), allowPromotionCodes: true };
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'FREE', amountDiscount: '300000000' };
  const events = given([created(session)]).when({ type: 'ApplyDiscount', discount }, NOW);
  t.deepEqual(events, [
    { type: 'DiscountApplied', data: { discount: { ...discount, at: NOW } } },
    completedEvent('0', '0', null),
  ]);
  const state = given([created(session), ...events]).state();
  t.is(state.value, 'complete');
  t.like(state.context.session!, {
    status: 'complete',
    paymentStatus: 'paid',
    amountTotal: '0',
    amountReceived: '0',
    completedAt: NOW,
    transactionHash: null,
    paymentIntent: { status: 'succeeded', amount: '0', amountReceived: '0' },
  });
  // The same code again is nothing; the session no longer expires.
  t.deepEqual(given([created(session), ...events]).when({ type: 'ApplyDiscount', discount }), []);
  t.deepEqual(given([created(session), ...events]).when({ type: 'ExpireCheckoutSession' }, AFTER_EXPIRY), []);
});

test('given gas collection on and an asset chosen, when a 100% code is applied, then the gas fee falls away with the goods and the session completes, as when the code comes first: no deposit is left to sweep', (t) => {
  const session = { ...sessionFixture(), allowPromotionCodes: true };
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'FREE', amountDiscount: '300000000' };
  const withGas = {
    ...session,
    addresses: session.addresses.map((a) => ({ ...a, gas: '150000', gasAmount: '2500000' })),
  };
  const chosen = [
    created(withGas),
    ...given([created(withGas)]).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW),
  ];
  const events = given(chosen).when({ type: 'ApplyDiscount', discount }, NOW);
  t.deepEqual(events, [
    { type: 'DiscountApplied', data: { discount: { ...discount, at: NOW }, amountGasFee: '0' } },
    completedEvent('0', '0', null),
  ]);
  const after = given([...chosen, ...events]).state().context.session!;
  const codeFirst = given([
    created(withGas),
    ...given([created(withGas)]).when({ type: 'ApplyDiscount', discount }, NOW),
  ]).state().context.session!;
  for (const s of [after, codeFirst])
    t.like(s, {
      status: 'complete',
      amountTotal: '0',
      amountGasFee: '0',
      amountDetails: { amountGasFee: '0', applyGasFee: false, amountTotal: '0' },
      paymentIntent: { status: 'succeeded', amount: '0' },
    });
  // A code that leaves goods to pay keeps the fee of the asset chosen.
  const half = { ...discount, code: 'HALF', amountDiscount: '150000000' };
  t.deepEqual(given(chosen).when({ type: 'ApplyDiscount', discount: half }, NOW), [
    { type: 'DiscountApplied', data: { discount: { ...half, at: NOW } } },
  ]);
});

test('a log from before: a 100% code applied after an asset with gas was chosen (DiscountApplied alone) replays to the same open session, its gas fee still asked', (t) => {
  const session = { ...sessionFixture(), allowPromotionCodes: true };
  const withGas = {
    ...session,
    addresses: session.addresses.map((a) => ({ ...a, gas: '150000', gasAmount: '2500000' })),
  };
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'FREE', amountDiscount: '300000000', at: NOW };
  const replayed = given([
    created(withGas),
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '3025000', amountGasFee: '2500000', at: NOW },
    },
    { type: 'DiscountApplied', data: { discount } },
  ]).state();
  t.true(replayed.matches('open'));
  t.like(replayed.context.session!, { amountTotal: '2500000', amountGasFee: '2500000' });
});

test('a discount is refused when the session does not allow codes, is not open, or already has a payment', (t) => {
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'LAUNCH', amountDiscount: '1' };
  t.throws(() => given([created()]).when({ type: 'ApplyDiscount', discount }), {
    instanceOf: ValidationError,
    message: /does not accept/,
  });
  const allowing = created({ ...sessionFixture(), allowPromotionCodes: true });
  t.throws(() => given([allowing, expired]).when({ type: 'ApplyDiscount', discount }), {
    instanceOf: InvalidStateError,
    message: /expired/,
  });
  // A payment pending, or taken away by a reorg and awaited back, would read as over the discounted total.
  const awaited: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW, mayReturn: true },
  };
  for (const history of [
    [allowing, detected('t1', '1')],
    [allowing, detected('t1', '1'), awaited],
  ]) {
    const error = t.throws(() => given(history).when({ type: 'ApplyDiscount', discount }, NOW), {
      instanceOf: ConflictError,
      message: /pending/,
    });
    t.is(error.code, 'payment_pending');
  }
  // Given up (its height final in another block), it no longer stands in the way.
  const gone: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: NOW, paymentFailed: true },
  };
  t.is(given([allowing, detected('t1', '1'), awaited, gone]).when({ type: 'ApplyDiscount', discount }, NOW).length, 1);
});

test('given an open session past its expiresAt (its expiry not recorded yet), when a discount is applied, then refused: it could never be used', (t) => {
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'LAUNCH', amountDiscount: '1' };
  const allowing = created({ ...sessionFixture(), allowPromotionCodes: true });
  const error = t.throws(() => given([allowing]).when({ type: 'ApplyDiscount', discount }, AFTER_EXPIRY), {
    instanceOf: InvalidStateError,
  });
  t.is(error.code, 'checkout_session_expired');
  t.is(given([allowing]).when({ type: 'ApplyDiscount', discount }, '2026-01-01T00:59:59.999Z').length, 1);
});

test('given an open session with a payment pending, when the expiry timer fires past expiresAt, then nothing: the expiry waits, and firing again changes nothing', (t) => {
  const history = [created(), detected('t1', '300000000')];
  t.deepEqual(given(history).when({ type: 'ExpireCheckoutSession' }, AFTER_EXPIRY), []);
  t.deepEqual(given(history).when({ type: 'ExpireCheckoutSession' }, '2026-01-01T05:00:00.000Z'), []);
  const state = given(history).state();
  t.deepEqual(state.value, { open: 'processing' });
  t.is(state.context.session?.paymentIntent.status, 'processing');
  // Then confirmed past expiresAt: completed or part-paid as usual, not a late payment.
  const exact = given(history).when({ type: 'ConfirmTransfer', transferId: 't1' }, AFTER_EXPIRY);
  t.deepEqual(
    exact.map((e) => e.type),
    ['PaymentConfirmed', 'CheckoutSessionCompleted'],
  );
  t.false(given([...history, ...exact]).state().context.session!.payments[0]!.late);
  const short = given([created(), detected('t1', '100000000')]).when(
    { type: 'ConfirmTransfer', transferId: 't1' },
    AFTER_EXPIRY,
  );
  t.deepEqual(
    short.map((e) => e.type),
    ['PaymentConfirmed', 'CheckoutSessionPartiallyPaid'],
  );
});

test('given a pending payment detected in time, when a reorg withdraws it past expiresAt, then the session waits for it to be mined again; once its height is final in another block, the session expires with that', (t) => {
  const history = [created(), detected('t1', '300000000')];
  const events = given(history).when({ type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' }, AFTER_EXPIRY);
  t.deepEqual(events, [
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: AFTER_EXPIRY, mayReturn: true } },
  ]);
  const waiting = [...history, ...events];
  t.deepEqual(given(waiting).state().value, { open: 'processing' });
  t.is(given(waiting).state().context.session?.paymentIntent.status, 'processing');
  t.like(given(waiting).state().context.session?.payments[0], { status: 'withdrawn', mayReturn: true });
  // The expiry timer, tried again (a restart), waits too; a second reorg message changes nothing.
  t.deepEqual(given(waiting).when({ type: 'ExpireCheckoutSession' }, AFTER_EXPIRY), []);
  t.deepEqual(given(waiting).when({ type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' }, AFTER_EXPIRY), []);

  const gone = given(waiting).when(
    { type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK },
    AFTER_EXPIRY,
  );
  t.deepEqual(gone, [
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: NOT_IN_FINAL_BLOCK, at: AFTER_EXPIRY } },
    expired,
  ]);
  // Expired with it: the expiry's payment_intent.canceled tells the end, no payment_failed before it.
  const session = given([...waiting, ...gone]).state().context.session!;
  t.like(session, { status: 'expired', paymentIntent: { status: 'canceled' } });
  // So for a pending one gone for good past expiresAt at once (never awaited back).
  t.deepEqual(
    given(history).when({ type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK }, AFTER_EXPIRY),
    gone,
  );
  t.is(session.payments[0]?.mayReturn, undefined);
  t.deepEqual(
    given([...waiting, ...gone]).when(
      { type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK },
      AFTER_EXPIRY,
    ),
    [],
  );
});

test('a log written before a reorg left the session waiting (a withdrawal past expiresAt, the expiry with it) replays as it did: expired', (t) => {
  const history = [
    created(),
    detected('t1', '300000000'),
    {
      type: 'PaymentWithdrawn',
      data: { transferId: 't1', reason: 'reorg', at: AFTER_EXPIRY, paymentFailed: true },
    } as const,
    expired,
  ];
  t.like(given(history).state().context.session, { status: 'expired', paymentIntent: { status: 'canceled' } });
  // Its transfer mined again is late, as it was then.
  const remined = { ...paymentFixture('t1', '300000000'), blockNumber: 11, blockHash: '0xb10d' };
  const again = [...history, ...given(history).when({ type: 'RecordTransfer', payment: remined }, AFTER_EXPIRY)];
  t.deepEqual(
    given(again)
      .when({ type: 'ConfirmTransfer', transferId: 't1' }, AFTER_EXPIRY)
      .map((e) => e.type),
    ['PaymentConfirmed', 'LatePaymentReceived'],
  );
});

test('a payment not confirmed when the session expired is marked seen before the close, as a cancel marks it: one pending in a log from before expiry waited for it, one a reorg took for good and mined again after; one first seen after the expiry is not', (t) => {
  // A log from before expiry waited for pending payments: expired while t1 confirmed.
  const old = [created(), detected('t1', '300000000'), expired];
  const marks = (history: CheckoutSessionEvent[]) =>
    given(history)
      .state()
      .context.session?.payments.map((p) => [p.transferId, p.status, p.late, p.seenBeforeClose ?? false]);
  const final = [...old, ...given(old).when({ type: 'ConfirmTransfer', transferId: 't1' }, AFTER_EXPIRY)];
  t.deepEqual(marks(final), [['t1', 'confirmed', true, true]]);
  // Gone for good past expiresAt (the session expires with it), then mined again in another block.
  const history = [created(), detected('t1', '300000000')];
  const gone = [
    ...history,
    ...given(history).when({ type: 'WithdrawTransfer', transferId: 't1', reason: NOT_IN_FINAL_BLOCK }, AFTER_EXPIRY),
  ];
  const remined = { ...paymentFixture('t1', '300000000'), blockNumber: 11, blockHash: '0xb10d' };
  const again = [...gone, ...given(gone).when({ type: 'RecordTransfer', payment: remined }, AFTER_EXPIRY)];
  again.push(...given(again).when({ type: 'ConfirmTransfer', transferId: 't1' }, AFTER_EXPIRY));
  again.push(detected('t2', '100000000', AFTER_EXPIRY));
  t.deepEqual(marks(again), [
    ['t1', 'confirmed', true, true],
    ['t2', 'pending', false, false],
  ]);
});

test('a payment detected in time and withdrawn by a reorg past expiresAt counts on time when mined again, in another block or its own back: the session completes, never expired, not late', (t) => {
  const withdrawn: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: AFTER_EXPIRY, paymentFailed: true, mayReturn: true },
  };
  const history = [created(), detected('t1', '300000000'), withdrawn];
  const remined = { ...paymentFixture('t1', '300000000'), blockNumber: 11, blockHash: '0xb10d' };
  const detectedAgain = given(history).when({ type: 'RecordTransfer', payment: remined }, AFTER_EXPIRY);
  const elsewhere = [...history, ...detectedAgain];
  t.deepEqual(given(elsewhere).state().value, { open: 'processing' });
  t.is(given(elsewhere).state().context.session?.payments[0]?.mayReturn, undefined);
  const viaAnother = given(elsewhere).when({ type: 'ConfirmTransfer', transferId: 't1' }, AFTER_EXPIRY);
  const viaOwn = given(history).when(
    { type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' },
    AFTER_EXPIRY,
  );
  for (const [events, before] of [
    [viaAnother, elsewhere],
    [viaOwn, history],
  ] as const) {
    t.deepEqual(
      events.filter((e) => e.type !== 'PaymentDetected').map((e) => e.type),
      ['PaymentConfirmed', 'CheckoutSessionCompleted'],
    );
    t.like(given([...before, ...events]).state().context.session, {
      status: 'complete',
      paymentStatus: 'paid',
      amountReceived: '300000000',
      payments: [{ status: 'confirmed', late: false }],
    });
  }
});

test('a reorg A→B→A past expiresAt: a payment detected in time in A, mined again in B after expiresAt and reorged away with B, is still waited for and counts on time when A is final, never expired, not late', (t) => {
  const inA = paymentFixture('t1', '300000000');
  const inB = { ...inA, blockNumber: 11, blockHash: '0xb10d' };
  const LATER = '2026-01-01T01:05:00.000Z';
  const FINAL = '2026-01-01T01:10:00.000Z';
  const then = (history: CheckoutSessionEvent[], command: CheckoutSessionCommand, at: string) => [
    ...history,
    ...given(history).when(command, at),
  ];
  const seenInA = then([created()], { type: 'RecordTransfer', payment: inA }, NOW);
  const outOfA = then(seenInA, { type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' }, AFTER_EXPIRY);
  t.like(outOfA.at(-1), { type: 'PaymentWithdrawn', data: { mayReturn: true } });
  const seenInB = then(outOfA, { type: 'RecordTransfer', payment: inB }, AFTER_EXPIRY);
  // Seen again, it keeps the time it was first detected: that one was in time.
  t.like(given(seenInB).state().context.session, {
    updatedAt: AFTER_EXPIRY,
    payments: [{ status: 'pending', blockHash: '0xb10d', detectedAt: NOW }],
  });
  const outOfB = given(seenInB).when({ type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' }, LATER);
  t.deepEqual(outOfB, [
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: LATER, mayReturn: true } },
  ]);
  const waiting = [...seenInB, ...outOfB];
  t.deepEqual(given(waiting).state().value, { open: 'processing' });
  t.deepEqual(given(waiting).when({ type: 'ExpireCheckoutSession' }, LATER), []);
  const final = given(waiting).when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' }, FINAL);
  t.deepEqual(
    final.map((e) => e.type),
    ['PaymentDetected', 'PaymentConfirmed', 'CheckoutSessionCompleted'],
  );
  t.like(given([...waiting, ...final]).state().context.session, {
    status: 'complete',
    paymentStatus: 'paid',
    amountReceived: '300000000',
    payments: [{ status: 'confirmed', late: false, blockHash: '0xb10c', detectedAt: NOW }],
  });
});

test('a log written before re-detections kept the first detection (A→B→A past expiresAt: B withdrawn without mayReturn, expired, A late) replays as it did', (t) => {
  const inB = { ...paymentFixture('t1', '300000000'), blockNumber: 11, blockHash: '0xb10d' };
  const LATER = '2026-01-01T01:05:00.000Z';
  const history: CheckoutSessionEvent[] = [
    created(),
    detected('t1', '300000000', NOW),
    {
      type: 'PaymentWithdrawn',
      data: { transferId: 't1', reason: 'reorg', at: AFTER_EXPIRY, paymentFailed: true, mayReturn: true },
    },
    {
      type: 'PaymentDetected',
      data: { payment: { ...inB, status: 'pending', detectedAt: AFTER_EXPIRY, confirmedAt: null, late: false } },
    },
    { type: 'PaymentWithdrawn', data: { transferId: 't1', reason: 'reorg', at: LATER, paymentFailed: true } },
    { type: 'CheckoutSessionExpired', data: { at: LATER } },
  ];
  t.like(given(history).state().context.session, { status: 'expired', payments: [{ status: 'withdrawn' }] });
  t.is(given(history).state().context.session?.payments[0]?.mayReturn, undefined);
  t.deepEqual(
    given(history)
      .when({ type: 'ReinstateTransfer', transferId: 't1', blockHash: '0xb10c' }, LATER)
      .map((e) => e.type),
    ['PaymentDetected', 'PaymentConfirmed', 'LatePaymentReceived'],
  );
});

test('a withdrawal does not expire the session before expiresAt, while another payment is pending, or once the session left open', (t) => {
  const withdraw = { type: 'WithdrawTransfer', transferId: 't1', reason: 'reorg' } as const;
  const before = given([created(), detected('t1', '300000000')]).when(withdraw, NOW);
  t.deepEqual(
    before.map((e) => e.type),
    ['PaymentWithdrawn'],
  );
  const another = [created(), detected('t1', '100000000'), detected('t2', '200000000')];
  t.deepEqual(
    given(another)
      .when(withdraw, AFTER_EXPIRY)
      .map((e) => e.type),
    ['PaymentWithdrawn'],
  );
  t.deepEqual(given(another).state().value, { open: 'processing' });
  t.deepEqual(given([...another, ...given(another).when(withdraw, AFTER_EXPIRY)]).state().value, {
    open: 'processing',
  });
  const partial: CheckoutSessionEvent = {
    type: 'CheckoutSessionPartiallyPaid',
    data: { amountReceived: '100000000', at: NOW },
  };
  const incomplete = [created(), detected('t2', '100000000'), confirmed('t2'), partial, detected('t1', '1')];
  t.deepEqual(
    given(incomplete)
      .when(withdraw, AFTER_EXPIRY)
      .map((e) => e.type),
    ['PaymentWithdrawn'],
  );
  const canceled: CheckoutSessionEvent = { type: 'CheckoutSessionCanceled', data: { at: NOW, reason: null } };
  t.deepEqual(
    given([created(), detected('t1', '1'), canceled])
      .when(withdraw, AFTER_EXPIRY)
      .map((e) => e.type),
    ['PaymentWithdrawn'],
  );
});

test('given a pending payment withdrawn before expiresAt, when the expiry timer fires, then the session expires as usual', (t) => {
  const withdrawn: CheckoutSessionEvent = {
    type: 'PaymentWithdrawn',
    data: { transferId: 't1', reason: 'reorg', at: NOW },
  };
  const history = [created(), detected('t1', '300000000'), withdrawn];
  t.deepEqual(given(history).state().value, { open: 'awaitingPayment' });
  t.deepEqual(given(history).when({ type: 'ExpireCheckoutSession' }, AFTER_EXPIRY), [expired]);
});

test('the chart accepts an expiry only at or after expiresAt, and still replays one recorded while a payment was pending (logs from before expiry waited)', (t) => {
  t.throws(() => given([created(), { type: 'CheckoutSessionExpired', data: { at: NOW } }]).state(), {
    instanceOf: IllegalEventError,
  });
  const recorded = given([created(), detected('t1', '300000000'), expired, confirmed('t1', AFTER_EXPIRY)]).state();
  t.is(recorded.value, 'expired');
});

test('given a paid session, when the merchant marks its payment refunded, then PaymentMarkedRefunded once, shown on the intent', (t) => {
  const paid = [created(), detected('t1', '300000000'), confirmed('t1'), completedEvent('300000000')];
  const events = given(paid).when({ type: 'MarkPaymentRefunded', comment: 'sent back by bank' }, NOW);
  t.deepEqual(events, [{ type: 'PaymentMarkedRefunded', data: { comment: 'sent back by bank', at: NOW } }]);
  const after = given([...paid, ...events]).state();
  t.true(after.matches('complete'));
  t.like(after.context.session?.paymentIntent, {
    status: 'succeeded',
    isMarkRefunded: true,
    markRefundedAt: NOW,
    markRefundedComment: 'sent back by bank',
  });
  t.deepEqual(given([...paid, ...events]).when({ type: 'MarkPaymentRefunded', comment: 'again' }, NOW), []);
});

test('given a late payment on an expired session, when marked refunded, then recorded; given nothing received, refused', (t) => {
  const late = [created(), expired, detected('t1', '300000000'), confirmed('t1')];
  t.deepEqual(given(late).when({ type: 'MarkPaymentRefunded', comment: null }, AFTER_EXPIRY), [
    { type: 'PaymentMarkedRefunded', data: { comment: null, at: AFTER_EXPIRY } },
  ]);
  const error = t.throws(() => given([created()]).when({ type: 'MarkPaymentRefunded', comment: null }, NOW), {
    instanceOf: InvalidStateError,
  });
  t.regex(error.message, /nothing to refund/);
});

test("given late money on a canceled session, when marked refunded, then the payments confirmed by then are marked covered, in the log's order: one confirmed after the mark in its very millisecond, or stamped earlier by a clock behind, is not; no event carries the mark", (t) => {
  const AT = '2026-01-01T00:40:00.000Z';
  const history = [created(), canceled(NOW)];
  const paidLate = (transferId: string, at: string): CheckoutSessionEvent[] => {
    const seen = given(history).when({ type: 'RecordTransfer', payment: paymentFixture(transferId, '100000000') }, at);
    history.push(...seen);
    const final = given(history).when({ type: 'ConfirmTransfer', transferId }, at);
    history.push(...final);
    return [...seen, ...final];
  };
  paidLate('t1', AT);
  const mark = given(history).when({ type: 'MarkPaymentRefunded', comment: null }, AT);
  history.push(...mark);
  // Confirmed after the mark in the same millisecond, then by an instance whose clock is a minute behind.
  const after = [...paidLate('t2', AT), ...paidLate('t3', '2026-01-01T00:39:00.000Z')];
  t.false(
    JSON.stringify([...mark, ...after]).includes('coveredByRefundMark'),
    'the mark is the fold’s, not the event’s',
  );
  t.deepEqual(
    given(history)
      .state()
      .context.session?.payments.map((p) => [p.transferId, p.late, p.confirmedAt, p.coveredByRefundMark ?? false]),
    [
      ['t1', true, AT, true],
      ['t2', true, AT, false],
      ['t3', true, '2026-01-01T00:39:00.000Z', false],
    ],
  );
});

test('a transfer whose log comes after a reconciliation credit already counted its money is recorded against the credit, never credited again', (t) => {
  // The Tron reconciler credited 3 USDC at block 20 from the deposit's balance (the logs had shown nothing): `credit`.
  const reconciled: CheckoutSessionEvent = {
    type: 'PaymentDetected',
    data: { payment: { ...credit, status: 'pending', detectedAt: NOW, confirmedAt: null, late: false } },
  };
  const history = [created(), reconciled, confirmed('r1'), completedEvent('300000000', '0', null)];
  // Then the node's log of the real transfer arrives: block 18, 1 USDC, then 2 USDC, within the credit.
  const first = given(history).when(
    { type: 'RecordTransfer', payment: { ...paymentFixture('t1', '100000000'), blockNumber: 18 } },
    NOW,
  );
  t.deepEqual(first, [
    {
      type: 'TransferAlreadyReconciled',
      data: {
        transfer: {
          transferId: 't1',
          transactionHash: paymentFixture('t1', '100000000').transactionHash,
          blockNumber: 18,
          amountRaw: '1000000',
          coveredBy: 'r1',
          at: NOW,
        },
      },
    },
  ]);
  t.deepEqual(
    given([...history, ...first]).when({
      type: 'RecordTransfer',
      payment: { ...paymentFixture('t1', '100000000'), blockNumber: 18 },
    }),
    [],
    'the same log again: nothing',
  );
  const second = given([...history, ...first]).when(
    { type: 'RecordTransfer', payment: { ...paymentFixture('t2', '200000000'), blockNumber: 20 } },
    NOW,
  );
  t.is(second[0]?.type, 'TransferAlreadyReconciled');
  const after = given([...history, ...first, ...second]).state().context.session!;
  t.is(after.amountReceived, '300000000', 'the money is counted once');
  t.deepEqual(
    after.payments.map((p) => p.transferId),
    ['r1'],
  );
  t.deepEqual(
    after.reconciledTransfers?.map((r) => [r.transferId, r.coveredBy]),
    [
      ['t1', 'r1'],
      ['t2', 'r1'],
    ],
  );

  // The credit is used up: more money, or money after the credit's block, is a payment of its own.
  const beyond = given([...history, ...first, ...second]).when(
    { type: 'RecordTransfer', payment: { ...paymentFixture('t3', '100000000'), blockNumber: 19 } },
    NOW,
  );
  t.is(beyond[0]?.type, 'PaymentDetected');
  const later = given([...history, ...first]).when(
    { type: 'RecordTransfer', payment: { ...paymentFixture('t4', '100000000'), blockNumber: 21 } },
    NOW,
  );
  t.is(later[0]?.type, 'PaymentDetected', 'a block after the balance read: new money');
  const elsewhere = given([...history]).when(
    {
      type: 'RecordTransfer',
      payment: { ...paymentFixture('t5', '100000000'), blockNumber: 18, toAddress: '0xother' },
    },
    NOW,
  );
  t.is(elsewhere[0]?.type, 'PaymentDetected', 'another address: not covered');
});

const daiDetected = (transferId: string, amountRaw: string): CheckoutSessionEvent => ({
  type: 'PaymentDetected',
  data: {
    payment: {
      ...daiPaymentFixture(transferId, amountRaw),
      status: 'pending',
      detectedAt: NOW,
      confirmedAt: null,
      late: false,
    },
  },
});

test('given a DAI session paid 1 wei short, then it stays incomplete owing 10^-8 shown, the wallet is asked for that 1 wei, and paying it completes it with nothing over', (t) => {
  // 0.00013993 DAI is 139930000000000 wei.
  const history = [created(daiSessionFixture()), daiDetected('t1', '139929999999999')];
  const short = given(history).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW);
  t.deepEqual(short, [
    confirmed('t1', NOW),
    { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '13992', at: NOW } },
  ]);
  const incomplete = given([...history, ...short]).state();
  t.is(incomplete.value, 'incomplete');
  // Shown rounded up: the page's smallest amount, 0.00000001 DAI, still owed.
  t.is(incomplete.context.session!.amountReceived, '13992');
  const picked = given([...history, ...short]).when({ type: 'SelectPaymentMethod', addressId: 'addr-dai' }, NOW);
  t.deepEqual(picked, [
    { type: 'PaymentMethodSelected', data: { addressId: 'addr-dai', amountDue: '1', amountGasFee: '0', at: NOW } },
  ]);
  const rest = [...history, ...short, ...picked, daiDetected('t2', '1')];
  t.deepEqual(given(rest).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW), [
    confirmed('t2', NOW),
    completedEvent('13993', '0', `0x${'t2'.padStart(64, '0')}`),
  ]);
});

test('given DAI transfers whose parts below 10^-8 add up, then they count: the session completes, what was sent over is shown rounded down and kept exact in the payments', (t) => {
  // Each is 0.000069965 DAI and a wei or none: together 1 wei more than the 0.00013993 due.
  const history = [
    created(daiSessionFixture()),
    daiDetected('t1', '69965000000001'),
    confirmed('t1'),
    { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '6996', at: NOW } } as CheckoutSessionEvent,
    daiDetected('t2', '69965000000000'),
  ];
  const events = given(history).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.deepEqual(events, [confirmed('t2', NOW), completedEvent('13993', '0', `0x${'t2'.padStart(64, '0')}`)]);
  const session = given([...history, ...events]).state().context.session!;
  t.is(session.amountReceived, '13993');
  t.deepEqual(
    session.payments.map((p) => p.amountRaw),
    ['69965000000001', '69965000000000'],
  );
  // Paid again by 9,999,999,998 wei: 9,999,999,999 wei over in all, under 10^-8, shown as 0 over and
  // not announced (as at completion); kept exact, so one more wei makes it 0.00000001 over, announced once.
  const again = [...history, ...events, daiDetected('t3', '9999999998')];
  const overByLessThanAUnit = given(again).when({ type: 'ConfirmTransfer', transferId: 't3' }, NOW);
  t.deepEqual(overByLessThanAUnit, [confirmed('t3', NOW)]);
  t.is(given([...again, ...overByLessThanAUnit]).state().context.session?.amountOverpaid, '0');
  const oneMore = [...again, ...overByLessThanAUnit, daiDetected('t4', '1')];
  const overByAUnit = given(oneMore).when({ type: 'ConfirmTransfer', transferId: 't4' }, NOW);
  t.deepEqual(overByAUnit, [
    confirmed('t4', NOW),
    { type: 'OverpaymentReceived', data: { transferId: 't4', amount: '0', amountOverpaid: '1', at: NOW } },
  ]);
  t.is(given([...oneMore, ...overByAUnit]).state().context.session?.amountOverpaid, '1');
});

test('an excess under 10^-8 is announced the same way at completion and after it: not while amountOverpaid shows 0, once by the transfer that makes it show 0.00000001', (t) => {
  // 0.00013993 DAI due, paid 139930000000001 wei: 1 wei over at completion, shown as 0 over.
  const history = [created(daiSessionFixture()), daiDetected('t1', '139930000000001')];
  const completing = given(history).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW);
  t.deepEqual(completing, [confirmed('t1', NOW), completedEvent('13993', '0', `0x${'t1'.padStart(64, '0')}`)]);
  // 9,999,999,999 wei more after completion: 10^10 wei over in all, 0.00000001 DAI, announced once.
  const after = [...history, ...completing, daiDetected('t2', '9999999999')];
  const unit = given(after).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW);
  t.deepEqual(unit, [
    confirmed('t2', NOW),
    { type: 'OverpaymentReceived', data: { transferId: 't2', amount: '0', amountOverpaid: '1', at: NOW } },
  ]);
  // Another wei does not move amountOverpaid: nothing new to announce.
  const dust = [...after, ...unit, daiDetected('t3', '1')];
  t.deepEqual(given(dust).when({ type: 'ConfirmTransfer', transferId: 't3' }, NOW), [confirmed('t3', NOW)]);
});

test('given a sweep broadcast dropped for its age, when its look-up ends, then SweepLookUpEnded once; one dropped otherwise, or found mined, is not looked up', (t) => {
  const broadcast = {
    network: 'weir-testnet',
    chainId: 1,
    transactionHash: '0xabc',
    transferIds: ['t1'],
    share: { index: 0, count: 1 },
  };
  const history = [
    created(),
    detected('t1', '300000000'),
    confirmed('t1'),
    ...given([created(), detected('t1', '300000000'), confirmed('t1')]).when(
      { type: 'RecordSweepBroadcast', broadcast },
      NOW,
    ),
  ];
  const end = { type: 'EndSweepLookUp', network: 'weir-testnet', transactionHash: '0xabc' } as const;
  const drop = { type: 'DropSweepBroadcast', network: 'weir-testnet', transactionHash: '0xabc' } as const;
  const late = given(history).when({ ...drop, mayBeMined: true }, NOW);
  t.deepEqual(late, [
    { type: 'SweepDropped', data: { network: 'weir-testnet', transactionHash: '0xabc', at: NOW, mayBeMined: true } },
  ]);
  const ended = given([...history, ...late]).when(end, NOW);
  t.deepEqual(ended, [
    { type: 'SweepLookUpEnded', data: { network: 'weir-testnet', transactionHash: '0xabc', at: NOW } },
  ]);
  t.deepEqual(given([...history, ...late, ...ended]).when(end, NOW), []);
  t.deepEqual(given([...history, ...given(history).when(drop, NOW)]).when(end, NOW), []);
});

/** A subscription session created with neither a customer nor an email: its page asks the email first. */
const unnamedSubscription = () => sessionFixture({ mode: 'subscription', customerId: null, subscriptionId: 'sub-1' });

test('given a subscription session with no customer nor email, when the payer picks an asset, then refused naming the email, nothing recorded', (t) => {
  const error = t.throws(
    () => given([created(unnamedSubscription())]).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW),
    {
      instanceOf: ValidationError,
    },
  );
  t.is(error?.field, 'email');
  t.is(error?.code, 'parameter_missing');
  t.regex(error?.message ?? '', /your email is needed before choosing how to pay/);
});

test('given a subscription session with no customer nor email that allows promotion codes, when a code is applied, then refused naming the email: a 100% code would start the subscription with no one to bill; after the email it applies', (t) => {
  const session = { ...unnamedSubscription(), allowPromotionCodes: true };
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'FREE', amountDiscount: session.amountTotal };
  const error = t.throws(() => given([created(session)]).when({ type: 'ApplyDiscount', discount }, NOW), {
    instanceOf: ValidationError,
  });
  t.is(error?.field, 'email');
  t.is(error?.code, 'parameter_missing');
  t.regex(error?.message ?? '', /your email is needed before applying a promotion code/);
  const named = given([
    created(session),
    { type: 'CustomerEmailCollected', data: { email: 'pat@example.com', at: NOW } },
  ]);
  t.is(named.when({ type: 'ApplyDiscount', discount }, NOW)[0]?.type, 'DiscountApplied');
});

test('given a subscription session with no customer nor email, when the payer gives their email, then CustomerEmailCollected: the session holds it as customerDetails.email and takes an asset; the same email again is nothing, another is refused', (t) => {
  const session = unnamedSubscription();
  const events = given([created(session)]).when({ type: 'CollectCustomerEmail', email: 'pat@example.com' }, NOW);
  t.deepEqual(events, [{ type: 'CustomerEmailCollected', data: { email: 'pat@example.com', at: NOW } }]);
  const after = given([created(session), ...events]);
  t.deepEqual(after.state().context.session?.customerDetails, {
    name: null,
    email: 'pat@example.com',
    phone: null,
    address: null,
  });
  t.is(after.state().context.session?.updatedAt, NOW);
  t.deepEqual(after.when({ type: 'CollectCustomerEmail', email: 'PAT@example.com' }, NOW), []);
  t.throws(() => after.when({ type: 'CollectCustomerEmail', email: 'sam@example.com' }, NOW), {
    instanceOf: InvalidStateError,
    message: 'the email for this checkout was already given',
  });
  t.is(after.when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW)[0]?.type, 'PaymentMethodSelected');
});

test('given a session that names its customer, or a payment session, when an email is given, then refused: it asks none', (t) => {
  for (const session of [
    sessionFixture({ mode: 'subscription', customerId: 'cus-1', subscriptionId: 'sub-1' }),
    sessionFixture({ mode: 'payment', customerId: null }),
  ])
    t.throws(() => given([created(session)]).when({ type: 'CollectCustomerEmail', email: 'pat@example.com' }, NOW), {
      instanceOf: InvalidStateError,
      message: 'this checkout session does not ask for an email',
    });
});

test('given a canceled subscription session with no email, when the email is given, then refused: only an open session takes it', (t) => {
  const session = unnamedSubscription();
  t.throws(
    () => given([created(session), canceled()]).when({ type: 'CollectCustomerEmail', email: 'pat@example.com' }, NOW),
    {
      instanceOf: InvalidStateError,
      message: /checkout session is canceled/,
    },
  );
});

test('given a taxed session, when a 100% code comes with the lines taxed again, then nothing is left to pay; a discount recorded before that keeps its tax', (t) => {
  // A 100% code left the payer owing the exclusive tax of the undiscounted lines.
  const vat = { id: 'vat', name: 'VAT', description: null, country: null, percentage: 10, type: 'exclusive' as const };
  const base = sessionFixture();
  const line = lineItemFixture(3, {
    amountTotal: '330000000',
    amountTax: '30000000',
    taxRates: [{ ...vat, isDefault: true, amount: '30000000' }],
  });
  const session = {
    ...base,
    allowPromotionCodes: true,
    amountTotal: '330000000',
    amountDetails: { ...base.amountDetails, amountTotal: '330000000', amountTax: '30000000' },
    lineItems: { object: 'list' as const, data: [line] },
  };
  const discount = { couponId: 'c1', promotionCodeId: 'p1', code: 'FREE', amountDiscount: '300000000' };
  const lineTaxes = [{ amountTax: '0', taxRates: [{ ...vat, isDefault: true, amount: '0' }] }];
  const events = given([created(session)]).when({ type: 'ApplyDiscount', discount, lineTaxes }, NOW);
  t.deepEqual(events, [
    { type: 'DiscountApplied', data: { discount: { ...discount, at: NOW }, lineTaxes } },
    completedEvent('0', '0', null),
  ]);
  const free = given([created(session), ...events]).state().context.session!;
  t.like(free, { status: 'complete', amountTotal: '0', amountDetails: { amountTax: '0' } });
  t.like(free.lineItems.data[0], {
    amountSubtotal: '300000000',
    amountTax: '0',
    amountTotal: '300000000',
    amountDiscount: '300000000',
  });

  // Recorded before tax followed the discount (no lineTaxes): replayed as it was, its tax still owed.
  const old = given([created(session)]).when({ type: 'ApplyDiscount', discount }, NOW);
  t.deepEqual(old, [{ type: 'DiscountApplied', data: { discount: { ...discount, at: NOW } } }]);
  const kept = given([created(session), ...old]).state().context.session!;
  t.like(kept, { status: 'open', amountTotal: '30000000', amountDetails: { amountTax: '30000000' } });
  // Each line's share of the discount, whichever way it was recorded (the volume report by product takes it off).
  t.like(kept.lineItems.data[0], { amountTax: '30000000', amountDiscount: '300000000' });
});

/** USDC on a BSC-like chain: 18 decimals, finer than the 10^8 scale and than the 6 of USDC elsewhere. */
const BSC_USDC = {
  id: 'weir-bsc:usdc',
  name: 'USD Coin',
  symbol: 'USDC',
  currency: 'usdc',
  chainId: 97,
  address: '0x0000000000000000000000000000000000000b5c',
  decimals: 18,
};

/** The fixture's 3 USDC session offering 6-decimal USDC and 18-decimal BSC USDC. */
function twoUsdcSession() {
  const base = sessionFixture();
  return sessionFixture({
    addresses: [
      ...base.addresses,
      { ...base.addresses[0]!, id: 'addr-bsc-usdc', network: 'weir-bsc', asset: BSC_USDC },
    ],
  });
}

/** `amountRaw` (18 decimals) of BSC USDC seen at the session's BSC address. */
const bscDetected = (transferId: string, amountRaw: string): CheckoutSessionEvent => ({
  type: 'PaymentDetected',
  data: {
    payment: {
      ...paymentFixture(transferId, '0'),
      network: 'weir-bsc',
      chainId: 97,
      asset: BSC_USDC,
      amountRaw,
      amount: (BigInt(amountRaw) / 10n ** 10n).toString(),
      status: 'pending',
      detectedAt: NOW,
      confirmedAt: null,
      late: false,
    },
  },
});

test('given a session partly paid in 18-decimal USDC, when the payer picks 6-decimal USDC for the rest, then the rest is asked rounded up to its smallest unit, and paying it completes the session', (t) => {
  // 0.123456789012345678 USDC paid of 3: 2.876543210987654322 left, which 6 decimals cannot carry.
  const paid = [created(twoUsdcSession()), bscDetected('t1', '123456789012345678')];
  const incomplete = [...paid, ...given(paid).when({ type: 'ConfirmTransfer', transferId: 't1' }, NOW)];
  t.is(given(incomplete).state().value, 'incomplete');
  const picked = given(incomplete).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }, NOW);
  // Never less than owed, at most one unit (10^-6) more.
  t.deepEqual(picked, [
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-usdc', amountDue: '2876544', amountGasFee: '0', at: NOW },
    },
  ]);
  // Paying that in 6-decimal USDC completes it; the 0.000000789012345678 over is shown rounded down.
  const rest = [...incomplete, ...picked, detected('t2', '287654400')];
  t.deepEqual(given(rest).when({ type: 'ConfirmTransfer', transferId: 't2' }, NOW), [
    confirmed('t2', NOW),
    completedEvent('300000078', '78', `0x${'t2'.padStart(64, '0')}`),
    { type: 'OverpaymentReceived', data: { transferId: 't2', amount: '287654400', amountOverpaid: '78', at: NOW } },
  ]);
  // The 18-decimal asset is asked the exact rest, to the wei.
  t.deepEqual(given(incomplete).when({ type: 'SelectPaymentMethod', addressId: 'addr-bsc-usdc' }, NOW), [
    {
      type: 'PaymentMethodSelected',
      data: { addressId: 'addr-bsc-usdc', amountDue: '2876543210987654322', amountGasFee: '0', at: NOW },
    },
  ]);
});
