import test, { type ExecutionContext } from 'ava';
import { erc20Abi, getAddress, type Abi, type Address, type Hash, type Hex } from 'viem';
import { compileContracts } from '../../src/chain-ingest/evm/contracts/compile.ts';
import { eventually, type ApiResponse } from '../support/api-client.ts';
import { devnetPayer } from '../support/evm-devnet.ts';
import { startDevnetWeir } from '../support/devnet-weir.ts';

/**
 * Native coin a contract sends to a deposit address (a smart wallet, a multisig, a batch payout)
 * is an internal call: the follower sees only top-level values, so only recovery by hash, reading
 * the node's call trace, credits it. Anvil serves `debug_traceTransaction` with the callTracer;
 * a proxy in front of it plays a node without the debug API.
 */

/** A contract that pays on what it is sent: as a smart wallet or batch payout does, by an internal CALL. */
const PAY_THROUGH = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;
interface IERC20 {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}
/// Pays \`to\` everything it is created with by destroying itself (created in the same transaction: gone after Cancun too).
contract Destroyer {
    constructor(address payable to) payable {
        selfdestruct(to);
    }
}
contract PayThrough {
    /// A batch payout: \`amount\` of the sender's \`token\` to \`tokenTo\` (a Transfer log), the coin sent to \`to\` (an internal CALL).
    function payBoth(address token, address tokenTo, uint256 amount, address to) external payable {
        require(IERC20(token).transferFrom(msg.sender, tokenTo, amount), "token payment failed");
        (bool ok,) = to.call{value: msg.value}("");
        require(ok, "payment failed");
    }
    function payByDestroying(address payable to) external payable {
        new Destroyer{value: msg.value}(to);
    }
    function pay(address to) external payable {
        (bool ok,) = to.call{value: msg.value}("");
        require(ok, "payment failed");
    }
    /// Pays \`to\` in an inner call that then reverts: the payment is undone, the transaction succeeds.
    function payUndone(address to) external payable {
        try this.payThenRevert{value: msg.value}(to) {} catch {}
    }
    function payThenRevert(address to) external payable {
        (bool ok,) = to.call{value: msg.value}("");
        require(ok, "payment failed");
        revert("undone");
    }
}
`;

type Session = {
  id: string;
  status: string;
  amountReceived: string;
  addresses: { paymentAddress: string; asset?: { currency: string } }[];
  paymentIntent: { transactions: { transactionHash: string; status: string }[] };
  recovery?: { outcome: string; message: string };
};

const BY_HASH = '/api/v1/checkout/sessions/auto-recover-by-transaction-hash';
const CHAIN = 31337;
const CENT_OF_ETH = 10n ** 16n; // 0.01 ETH, unit amount 1000000

async function world(t: ExecutionContext) {
  // Traces are served until the test turns them off: then the node answers as geth without the debug API.
  const node = { traces: true };
  const { devnet, organization } = await startDevnetWeir(t, {
    node: 'anvil',
    confirmations: 1,
    // No reconciler: what the follower alone sees, and what recovery adds (the reconciler's own test: evm-contract-payments).
    overrides: { evmFollowers: true, evmReconciler: false },
    refuseRpc: (call) =>
      !node.traces && call.method === 'debug_traceTransaction'
        ? { code: -32601, message: 'the method debug_traceTransaction does not exist/is not available' }
        : undefined,
  });
  const shop = await organization('Smart Wallet Shop');
  const payer = devnetPayer(devnet.info);
  const { PayThrough } = compileContracts({ 'contracts/test/PayThrough.sol': PAY_THROUGH });
  const { publicClient, walletClient } = payer.clients;
  const deployed = await publicClient.waitForTransactionReceipt({
    hash: await walletClient.deployContract({ abi: PayThrough!.abi, bytecode: PayThrough!.bytecode }),
  });
  const contract = deployed.contractAddress as Address;
  const abi: Abi = PayThrough!.abi;

  const session = async (unitAmount = '1000000', currency = 'eth') => {
    const r = await shop.api.post<Session>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: {
        data: [{ priceData: { currency, unitAmount, productData: { name: 'Thing' } }, quantity: 1 }],
      },
    });
    t.is(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  /** Sends `value` through the contract's `functionName` with `args`; the hash once mined. */
  const call = async (functionName: string, args: unknown[], value: bigint): Promise<Hash> => {
    const hash = await walletClient.writeContract({ address: contract, abi, functionName, args, value });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    t.is(receipt.status, 'success');
    return hash;
  };
  const through = (functionName: 'pay' | 'payUndone' | 'payByDestroying', to: Address, value: bigint) =>
    call(functionName, [to], value);
  /** One transaction paying 1 USDC to `tokenTo` (a Transfer log the follower sees) and `value` to `to` by an internal CALL. */
  const usdc = devnet.info.contracts.usdc as Address;
  await publicClient.waitForTransactionReceipt({
    hash: await walletClient.writeContract({
      address: usdc,
      abi: erc20Abi,
      functionName: 'approve',
      args: [contract, 10n ** 12n],
    }),
  });
  const payBoth = (tokenTo: Address, to: Address, value: bigint) =>
    call('payBoth', [usdc, tokenTo, 1_000_000n, to], value);
  return {
    node,
    payBoth,
    api: shop.api,
    payer,
    session,
    through,
    get: async (id: string) => (await shop.api.get<Session>(`/api/v1/checkout/sessions/${id}`)).body,
    recover: <T = Session>(transactionHash: Hex) => shop.api.post<T>(BY_HASH, { chainId: CHAIN, transactionHash }),
    balance: (address: Address) => publicClient.getBalance({ address }),
  };
}

const depositAddress = (s: Session) => getAddress(s.addresses[0]!.paymentAddress);
const usdcAddress = (s: Session) => getAddress(s.addresses.find((a) => a.asset?.currency === 'usdc')!.paymentAddress);

function assertError(t: ExecutionContext, r: ApiResponse<unknown>, status: number, code: string, message: RegExp) {
  const body = r.body as { statusCode: number; code: string; message: string };
  t.is(r.status, status, JSON.stringify(r.body));
  t.is(body.code, code);
  t.regex(body.message, message);
}

test('ETH a contract forwards to a deposit address (by a CALL, beside a token transfer, or by SELFDESTRUCT) is missed by the follower and credited by recovery from the call trace; an undone inner payment is not; a node without traces gets a 409, or credits the direct part and says so', async (t) => {
  const w = await world(t);
  const paidByContract = await w.session();
  const internal = await w.through('pay', depositAddress(paidByContract), CENT_OF_ETH);
  t.is(await w.balance(depositAddress(paidByContract)), CENT_OF_ETH, 'the money is at the deposit address');

  // A direct payment in a later block: once the follower credits it, it has read the block of the internal one.
  const paidDirectly = await w.session();
  await w.payer.payNative(depositAddress(paidDirectly), CENT_OF_ETH);
  await eventually(async () => {
    const s = await w.get(paidDirectly.id);
    return s.status === 'complete' ? s : undefined;
  }, 'the follower to credit the direct payment');
  const missed = await w.get(paidByContract.id);
  t.is(missed.status, 'open', 'the follower does not see native coin sent by a contract');
  t.is(missed.paymentIntent.transactions.length, 0);

  const recovered = await w.recover(internal);
  t.is(recovered.status, 200, JSON.stringify(recovered.body));
  t.is(recovered.body.id, paidByContract.id);
  t.is(recovered.body.recovery?.outcome, 'complete', JSON.stringify(recovered.body.recovery));
  t.is(recovered.body.status, 'complete');
  t.is(recovered.body.amountReceived, '1000000');
  t.deepEqual(
    recovered.body.paymentIntent.transactions.map((x) => [x.transactionHash, x.status]),
    [[internal, 'confirmed']],
  );
  // Again: the same transfer id, so nothing is credited twice.
  const again = await w.recover(internal);
  t.is(again.body.recovery?.outcome, 'complete');
  t.is(again.body.amountReceived, '1000000');
  t.is(again.body.paymentIntent.transactions.length, 1);

  // An inner call that paid and then reverted moved nothing: nothing to credit.
  const undoneSession = await w.session();
  const undone = await w.through('payUndone', depositAddress(undoneSession), CENT_OF_ETH);
  t.is(await w.balance(depositAddress(undoneSession)), 0n);
  assertError(t, await w.recover(undone), 404, 'wrong_claim', /pays no checkout session of this organization/);
  t.is((await w.get(undoneSession.id)).status, 'open');

  // Coin a contract sends by destroying itself (SELFDESTRUCT) pays like a CALL.
  const destroyedFor = await w.session();
  const destroyed = await w.through('payByDestroying', depositAddress(destroyedFor), CENT_OF_ETH);
  t.is(await w.balance(depositAddress(destroyedFor)), CENT_OF_ETH);
  const byDestruct = await w.recover(destroyed);
  t.is(byDestruct.status, 200, JSON.stringify(byDestruct.body));
  t.is(byDestruct.body.id, destroyedFor.id);
  t.is(byDestruct.body.recovery?.outcome, 'complete', JSON.stringify(byDestruct.body.recovery));

  // One transaction pays a session in USDC (a Transfer log: the follower credits it) and another in ETH by an internal CALL.
  const inToken = await w.session('100000000', 'usdc');
  const inCoin = await w.session();
  const both = await w.payBoth(usdcAddress(inToken), depositAddress(inCoin), CENT_OF_ETH);
  await eventually(async () => {
    const s = await w.get(inToken.id);
    return s.status === 'complete' ? s : undefined;
  }, 'the follower to credit the token part');
  t.is((await w.get(inCoin.id)).status, 'open');
  const bothRecovered = await w.recover(both);
  t.is(bothRecovered.status, 200, JSON.stringify(bothRecovered.body));
  t.is((await w.get(inCoin.id)).status, 'complete', 'the internal part is credited beside the direct one');

  // A node without the debug API cannot show internal transfers: a 409 saying so and what to do, never a 5xx.
  const unseen = await w.session();
  const hidden = await w.through('pay', depositAddress(unseen), CENT_OF_ETH);
  w.node.traces = false;
  assertError(
    t,
    await w.recover(hidden),
    409,
    'internal_transfers_unavailable',
    /node cannot show internal transfers .* debug_traceTransaction .* WEIR_RPC_31337, then recover again/,
  );
  t.is((await w.get(unseen.id)).status, 'open');
  // Coin sent to an address without code calls nothing: a wrong claim needs no trace.
  const stray = await w.payer.payNative('0x000000000000000000000000000000000000dEaD', CENT_OF_ETH);
  assertError(t, await w.recover(stray.hash), 404, 'wrong_claim', /pays no checkout session of this organization/);
  // A payment the top level shows needs no trace: still credited by such a node.
  const direct = await w.session();
  const plain = await w.payer.payNative(depositAddress(direct), CENT_OF_ETH);
  const seen = await w.recover(plain.hash);
  t.is(seen.status, 200, JSON.stringify(seen.body));
  t.is(seen.body.recovery?.outcome, 'complete');
  t.notRegex(seen.body.recovery?.message ?? '', /could not be read/);
  // Paid in a token and through a contract: the token part is credited, the message says what could not be read.
  const tokenSeen = await w.session('100000000', 'usdc');
  const coinUnseen = await w.session();
  const half = await w.payBoth(usdcAddress(tokenSeen), depositAddress(coinUnseen), CENT_OF_ETH);
  const partly = await w.recover(half);
  t.is(partly.status, 200, JSON.stringify(partly.body));
  t.is(partly.body.id, tokenSeen.id);
  t.is(partly.body.recovery?.outcome, 'complete');
  t.regex(
    partly.body.recovery?.message ?? '',
    /internal transfers .* could not be read: .*WEIR_RPC_31337, then recover again/,
  );
  t.is((await w.get(coinUnseen.id)).status, 'open');
});
