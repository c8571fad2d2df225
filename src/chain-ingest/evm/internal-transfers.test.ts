import test from 'ava';
import { startFakeJsonRpc } from '../../../test/support/fake-json-rpc.ts';
import { transferId } from '../chain-messages.ts';
import { MalformedRpcResponseError, RpcEndpointsError } from './follower/errors.ts';
import { rpcValueReader } from './follower/rpc-values.ts';
import {
  internalTransferIndex,
  internalValueCalls,
  readInternalValueCalls,
  TraceUnavailableError,
} from './internal-transfers.ts';

const WALLET = '0x00000000000000000000000000000000000a11e7';
const DEPOSIT = '0x00000000000000000000000000000000000d3b05';
const OTHER = '0x0000000000000000000000000000000000000b0b';
const TX = `0x${'ab'.repeat(32)}`;
const read = rpcValueReader('devnet', 'debug_traceTransaction');

/** A Safe-like transaction: the top-level call (value to the wallet), its calls in depth-first positions 1…. */
const trace = {
  type: 'CALL',
  from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  to: WALLET,
  value: '0x64',
  calls: [
    {
      type: 'DELEGATECALL',
      from: WALLET,
      to: OTHER,
      calls: [{ type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x5' }],
    },
    { type: 'STATICCALL', from: WALLET, to: DEPOSIT },
    { type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x0' },
    {
      type: 'CALL',
      from: WALLET,
      to: OTHER,
      value: '0x7',
      error: 'execution reverted',
      calls: [{ type: 'CALL', from: OTHER, to: DEPOSIT, value: '0x7' }],
    },
    { type: 'CALLCODE', from: WALLET, to: DEPOSIT, value: '0x9' },
    { type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x2a' },
  ],
};

test('the value CALLs of a trace below its top-level call that no revert undid, indexed -1 - their depth-first position', (t) => {
  t.deepEqual(internalValueCalls(trace, read), [
    // Inside a DELEGATECALL, the wallet's own CALL moves its coin: position 2.
    { logIndex: -3, from: WALLET, to: DEPOSIT, value: 5n },
    // Not the STATICCALL (3), the zero value (4), the reverted call (5) nor what it called (6), nor the CALLCODE (7).
    { logIndex: -9, from: WALLET, to: DEPOSIT, value: 42n },
  ]);
  t.deepEqual(
    internalValueCalls({ type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x1' }, read),
    [],
    'the top level is the native transfer -1',
  );
});

test('internal transfer ids never meet the ids a follower publishes: token logs >= 0, the native value -1', (t) => {
  t.is(internalTransferIndex(0), -1, 'the top-level call is the native transfer the follower keys -1');
  const id = (logIndex: number) => transferId({ network: 'devnet', transactionHash: TX, logIndex });
  const followers = new Set([-1, 0, 1, 2, 3].map(id));
  for (const position of [1, 2, 3, 1000]) t.false(followers.has(id(internalTransferIndex(position))));
  t.is(id(internalTransferIndex(1)), `devnet:${TX}:-2`);
});

test('a malformed trace is a malformed answer', (t) => {
  t.throws(() => internalValueCalls({ type: 'CALL', calls: 'none' }, read), { instanceOf: MalformedRpcResponseError });
  t.throws(
    () =>
      internalValueCalls({ type: 'CALL', calls: [{ type: 'CALL', from: WALLET, to: DEPOSIT, value: 'lots' }] }, read),
    {
      instanceOf: MalformedRpcResponseError,
    },
  );
});

test('the trace is read from the first endpoint that serves it; endpoints that all lack the method are TraceUnavailableError; one that does not answer is RpcEndpointsError', async (t) => {
  const asked: unknown[][] = [];
  const serving = await startFakeJsonRpc(t, (method, params) => {
    asked.push([method, ...params]);
    return trace;
  });
  const lacking = await startFakeJsonRpc(t, (method) => {
    throw new Error(`the method ${method} does not exist/is not available`);
  });
  const read = (urls: string[]) =>
    readInternalValueCalls({ network: 'devnet', urls, transactionHash: TX, timeoutMs: 2_000 });

  t.is((await read([lacking, serving])).length, 2);
  t.deepEqual(asked, [['debug_traceTransaction', TX, { tracer: 'callTracer' }]]);
  const unavailable = await t.throwsAsync(read([lacking, lacking]), { instanceOf: TraceUnavailableError });
  t.regex(unavailable.message, /no RPC endpoint of devnet serves debug_traceTransaction/);
  // Nothing listens there: it may serve traces, so this is not "unavailable" but a failure to retry.
  await t.throwsAsync(read([lacking, 'http://127.0.0.1:9']), { instanceOf: RpcEndpointsError });
});
