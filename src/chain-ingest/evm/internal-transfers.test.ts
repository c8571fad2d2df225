import { createServer } from 'node:http';
import test, { type ExecutionContext } from 'ava';
import { listenForTest, startFakeJsonRpc } from '../../../test/support/fake-json-rpc.ts';
import { transferId } from '../chain-messages.ts';
import { MalformedRpcResponseError, RpcEndpointsError } from './follower/errors.ts';
import { rpcValueReader } from './follower/rpc-values.ts';
import {
  internalTransferIndex,
  internalValueCalls,
  keepRecordedIndexes,
  readInternalValueCalls,
  TraceUnavailableError,
} from './internal-transfers.ts';

const WALLET = '0x00000000000000000000000000000000000a11e7';
const DEPOSIT = '0x00000000000000000000000000000000000d3b05';
const OTHER = '0x0000000000000000000000000000000000b0b0b0';
const TX = `0x${'ab'.repeat(32)}`;
const read = rpcValueReader('devnet', 'debug_traceTransaction');

/** A Safe-like transaction: the top-level call (value to the wallet), then its calls depth-first. */
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

test('the value CALLs of a trace below its top-level call that no revert undid, indexed -1 - their ordinal among the frames moving value', (t) => {
  t.deepEqual(internalValueCalls(trace, read), [
    // Inside a DELEGATECALL, the wallet's own CALL moves its coin: the first frame moving value.
    { logIndex: -2, from: WALLET, to: DEPOSIT, value: 5n },
    // Not the STATICCALL nor the zero value (unnumbered), nor the reverted call (2) and what it called (3), nor the CALLCODE (4).
    { logIndex: -6, from: WALLET, to: DEPOSIT, value: 42n },
  ]);
  t.deepEqual(
    internalValueCalls({ type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x1' }, read),
    [],
    'the top level is the native transfer -1',
  );
});

test('a CALL under a frame that reverted moves nothing, however deep: the tracer marks only the reverted frame, its calls inherit the revert', (t) => {
  const tx = {
    type: 'CALL',
    from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
    to: WALLET,
    value: '0x0',
    calls: [
      {
        // A try/catch around a call without value that reverted after its own calls succeeded.
        type: 'CALL',
        from: WALLET,
        to: OTHER,
        value: '0x0',
        error: 'execution reverted',
        calls: [
          {
            type: 'DELEGATECALL',
            from: OTHER,
            to: WALLET,
            calls: [
              {
                type: 'CALL',
                from: OTHER,
                to: OTHER,
                value: '0x1',
                calls: [{ type: 'CALL', from: OTHER, to: DEPOSIT, value: '0x3' }],
              },
            ],
          },
          { type: 'SELFDESTRUCT', from: OTHER, to: DEPOSIT, value: '0x4' },
        ],
      },
      { type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x6', error: 'out of gas' },
      { type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x2a' },
    ],
  };
  // Numbered still (-2 to OTHER, -3 and -4 undone, -5 the surviving one; the undone SELFDESTRUCT after them, -6).
  t.deepEqual(internalValueCalls(tx, read), [{ logIndex: -5, from: WALLET, to: DEPOSIT, value: 42n }]);
});

test("a SELFDESTRUCT's balance is credited to its beneficiary like a value CALL, numbered after every call so that the calls keep their ids", (t) => {
  const BOMB = '0x0000000000000000000000000000000000b0b0b1';
  const tx = {
    type: 'CALL',
    from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
    to: WALLET,
    value: '0x64',
    calls: [
      {
        // A contract created to pay by destroying itself (its balance moves after Cancun too).
        type: 'CREATE',
        from: WALLET,
        to: BOMB,
        value: '0x50',
        calls: [{ type: 'SELFDESTRUCT', from: BOMB, to: DEPOSIT, value: '0x50' }],
      },
      { type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x14' },
      // Destroyed in favour of itself: nothing moves. Without a value: not numbered.
      {
        type: 'CALL',
        from: WALLET,
        to: OTHER,
        calls: [{ type: 'SELFDESTRUCT', from: OTHER, to: OTHER, value: '0x2' }],
      },
      {
        type: 'CALL',
        from: WALLET,
        to: BOMB,
        calls: [{ type: 'SELFDESTRUCT', from: BOMB, to: DEPOSIT, value: '0x0' }],
      },
    ],
  };
  t.deepEqual(internalValueCalls(tx, read), [
    { logIndex: -3, from: WALLET, to: DEPOSIT, value: 20n },
    { logIndex: -4, from: BOMB, to: DEPOSIT, value: 80n },
  ]);
  // The calls' ids are those of a tracer that lists no SELFDESTRUCT.
  const withoutDestructs = structuredClone(tx);
  withoutDestructs.calls[0]!.calls = [];
  t.deepEqual(internalValueCalls(withoutDestructs, read), [{ logIndex: -3, from: WALLET, to: DEPOSIT, value: 20n }]);
});

/** What a Safe's execTransaction looks like to a node: the owners' signatures checked by ecrecover (0x01), then the payment. */
const safeTrace = (precompiles: boolean) => ({
  type: 'CALL',
  from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  to: WALLET,
  value: '0x0',
  calls: [
    {
      type: 'DELEGATECALL',
      from: WALLET,
      to: OTHER,
      // geth may show the caller's value on a DELEGATECALL, revm-based tracers not.
      ...(precompiles ? { value: '0x0' } : {}),
      calls: [
        ...(precompiles
          ? [
              { type: 'STATICCALL', from: WALLET, to: '0x0000000000000000000000000000000000000001' },
              { type: 'CALL', from: WALLET, to: '0x0000000000000000000000000000000000000004', value: '0x0' },
            ]
          : []),
        { type: 'CALL', from: WALLET, to: OTHER, value: '0x3', error: 'execution reverted' },
        ...(precompiles
          ? [{ type: 'STATICCALL', from: WALLET, to: '0x0000000000000000000000000000000000000001' }]
          : []),
        { type: 'CALL', from: WALLET, to: DEPOSIT, value: '0x2a' },
      ],
    },
  ],
});

test('a transfer gets the same index from a node that lists precompile calls (geth, erigon) as from one that does not (reth, anvil)', (t) => {
  const withPrecompiles = internalValueCalls(safeTrace(true), read);
  t.deepEqual(withPrecompiles, [{ logIndex: -3, from: WALLET, to: DEPOSIT, value: 42n }]);
  t.deepEqual(internalValueCalls(safeTrace(false), read), withPrecompiles);
  // A precompile or system contract paid with value is not numbered either: not every node lists the call.
  const paidPrecompile = safeTrace(true);
  paidPrecompile.calls[0]!.calls[1]!.value = '0x1';
  t.deepEqual(internalValueCalls(paidPrecompile, read), withPrecompiles);
});

test('a move a session already records from the transaction keeps its recorded index; each recorded one is claimed once', (t) => {
  const call = (logIndex: number, to: string, value: bigint) => ({ logIndex, from: WALLET, to, value });
  const calls = [call(-2, DEPOSIT, 5n), call(-3, DEPOSIT, 5n), call(-4, OTHER, 7n)];
  t.deepEqual(keepRecordedIndexes(calls, [], []), calls);
  // Credited before as -7 (another node numbered it so): the same move keeps -7, the second payment of 5 stays new.
  t.deepEqual(
    keepRecordedIndexes(calls, [{ logIndex: -7, to: DEPOSIT, value: 5n }], [-7]).map((c) => c.logIndex),
    [-7, -3, -4],
  );
  // Its own index is kept first: -3 is recorded, so -2 takes the other recorded lookalike.
  t.deepEqual(
    keepRecordedIndexes(
      calls,
      [
        { logIndex: -3, to: DEPOSIT, value: 5n },
        { logIndex: -9, to: DEPOSIT, value: 5n },
      ],
      [-3, -9],
    ).map((c) => c.logIndex),
    [-9, -3, -4],
  );
  // Another amount, another address, the top-level value or a token log is no such move.
  t.deepEqual(
    keepRecordedIndexes(
      calls,
      [
        { logIndex: -8, to: DEPOSIT, value: 6n },
        { logIndex: -1, to: DEPOSIT, value: 5n },
        { logIndex: 0, to: OTHER, value: 7n },
      ],
      [-8, -1, 0],
    ).map((c) => c.logIndex),
    [-2, -3, -4],
  );
  t.deepEqual(
    keepRecordedIndexes([call(-2, DEPOSIT.toUpperCase(), 5n)], [{ logIndex: -5, to: DEPOSIT, value: 5n }], [-5], (a) =>
      a.toLowerCase(),
    )[0]!.logIndex,
    -5,
    "compared in the rail's form",
  );
});

test('a call whose own index another move holds, recorded by any session or handed out in the same pass, gets a fresh one: two moves never share an id', (t) => {
  // A batch payout [STATICCALL token, CALL D1 5, CALL D2 7]: numbered now D1 -2, D2 -3; an older
  // numbering (which counted the STATICCALL) had D1 as -3, and a session records it so.
  const call = (logIndex: number, to: string, value: bigint) => ({ logIndex, from: WALLET, to, value });
  const calls = [call(-2, DEPOSIT, 5n), call(-3, OTHER, 7n)];
  const d1 = { logIndex: -3, to: DEPOSIT, value: 5n };
  const both = keepRecordedIndexes(calls, [d1], [-3]);
  t.deepEqual(
    both.map((c) => [c.to, c.logIndex]),
    [
      [DEPOSIT, -3],
      [OTHER, -4],
    ],
    'D1 keeps its recorded -3; D2 does not take it too',
  );
  // Recovered again once D2 is recorded as -4: the same ids.
  t.deepEqual(
    keepRecordedIndexes(calls, [d1, { logIndex: -4, to: OTHER, value: 7n }], [-3, -4]).map((c) => c.logIndex),
    [-3, -4],
  );
  // Scoped to D2's session, which sees none of D1's session's payments: -3 is still someone's.
  const scoped = keepRecordedIndexes(calls, [], [-3]);
  t.not(scoped[1]!.logIndex, -3, "another session's id is never reused");
  t.is(new Set(scoped.map((c) => c.logIndex)).size, 2);
  t.false(scoped.some((c) => c.logIndex === -3));
  // D2 was recorded before as -2 (its old number), D1 not at all: D1 gets a fresh id, not -2.
  const swapped = keepRecordedIndexes(calls, [{ logIndex: -2, to: OTHER, value: 7n }], [-2]);
  t.deepEqual(
    swapped.map((c) => c.logIndex),
    [-4, -2],
  );
});

test('internal transfer ids never meet the ids a follower publishes: token logs >= 0, the native value -1', (t) => {
  t.is(internalTransferIndex(0), -1, 'the top-level call is the native transfer the follower keys -1');
  const id = (logIndex: number) => transferId({ network: 'devnet', transactionHash: TX, logIndex });
  const followers = new Set([-1, 0, 1, 2, 3].map(id));
  for (const ordinal of [1, 2, 3, 1000]) t.false(followers.has(id(internalTransferIndex(ordinal))));
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

/** An endpoint answering every request with HTTP `status` and `body`, as a provider's gateway in front of a node does. */
async function startRefusing(t: ExecutionContext, status: number, body: string): Promise<string> {
  const server = createServer((_request, response) => {
    response.statusCode = status;
    response.setHeader('content-type', 'text/plain');
    response.end(body);
  });
  return `${await listenForTest(t, server)}/v2/SECRET-KEY?api-key=SECRET-KEY`;
}

test('an endpoint that refuses debug_traceTransaction over HTTP (403, 405, 501, or saying so) has no trace API; another HTTP failure may pass', async (t) => {
  const read = (urls: string[]) =>
    readInternalValueCalls({ network: 'devnet', urls, transactionHash: TX, timeoutMs: 2_000 });
  for (const [status, body] of [
    [403, 'Forbidden'],
    [405, 'Method Not Allowed'],
    [501, 'Not Implemented'],
    [400, 'debug_traceTransaction is not supported on this plan'],
  ] as const) {
    const refused = await t.throwsAsync(read([await startRefusing(t, status, body)]), {
      instanceOf: TraceUnavailableError,
    });
    t.regex(refused.answers, new RegExp(`HTTP ${status}: .*${body}`), `${status}`);
    t.notRegex(refused.message, /SECRET-KEY/, 'the endpoint is named by its host only');
  }
  const failing = await t.throwsAsync(read([await startRefusing(t, 500, 'upstream connect error')]), {
    instanceOf: RpcEndpointsError,
  });
  t.notRegex(failing.message, /SECRET-KEY/);
  t.regex(failing.message, /http:\/\/127\.0\.0\.1:\d+\/…/);
});

test('a rate limit, a timeout or a gateway failure whose body says the service is "not available" or "disabled" may pass: a failure to retry, not a refusal', async (t) => {
  const read = (urls: string[]) =>
    readInternalValueCalls({ network: 'devnet', urls, transactionHash: TX, timeoutMs: 2_000 });
  for (const [status, body] of [
    [429, 'service not available: too many requests'],
    [408, 'request timeout, upstream not available'],
    [502, 'upstream not available'],
    [503, 'endpoint temporarily disabled for maintenance'],
  ] as const) {
    await t.throwsAsync(read([await startRefusing(t, status, body)]), { instanceOf: RpcEndpointsError }, `${status}`);
  }
});
