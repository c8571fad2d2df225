import test from 'ava';
import { HttpRequestError, TimeoutError } from 'viem';
import { SweepNodeError, SweepReceiptLostError, SweepRevertedError } from '../../sweeper/sweep-errors.ts';
import { ForwarderFlushError } from './contracts/errors.ts';
import { sweepFailureOf } from './evm-sweep-executor.ts';

const url = 'http://127.0.0.1:8545';
const rejected = (cause: unknown) =>
  new ForwarderFlushError('sweeping 1 deposit address(es) was rejected', undefined, undefined, { cause });

test('the node failing (5xx, 429, no answer, timeout, connection refused) is a SweepNodeError, also behind the flush error', (t) => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8545'), { code: 'ECONNREFUSED' });
  for (const cause of [
    new HttpRequestError({ url, status: 502 }),
    new HttpRequestError({ url, status: 429 }),
    new HttpRequestError({ url }),
    new TimeoutError({ body: {}, url }),
    refused,
  ]) {
    t.true(sweepFailureOf(rejected(cause)) instanceof SweepNodeError, cause.message);
  }
});

test("a revert is the transaction's: mined, it carries its gas as a SweepRevertedError; refused before mining, it stays as it came", (t) => {
  const paid = { gasUsed: 30_000n, gasCost: 300_000_000_000_000n };
  const mined = sweepFailureOf(new ForwarderFlushError('sweep transaction 0xab reverted', '0xab', paid));
  t.true(mined instanceof SweepRevertedError);
  t.deepEqual((mined as SweepRevertedError).transaction, { transactionHash: '0xab', ...paid });
  const notMined = rejected(new Error('reverted with NativeTransferFailed(0x1, 1000)'));
  t.is(sweepFailureOf(notMined), notMined);
  const badRequest = rejected(new HttpRequestError({ url, status: 400 }));
  t.is(sweepFailureOf(badRequest), badRequest);
});

test('a flush sent whose receipt was not had carries its hash as a SweepReceiptLostError, even when the node timed out', (t) => {
  const lost = sweepFailureOf(
    new ForwarderFlushError('sweep transaction 0xab was sent but its receipt could not be had', '0xab', undefined, {
      cause: new TimeoutError({ body: {}, url }),
    }),
  );
  t.true(lost instanceof SweepReceiptLostError);
  t.is((lost as SweepReceiptLostError).transactionHash, '0xab');
});
