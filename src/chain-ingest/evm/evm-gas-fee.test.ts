import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { checkoutSessionAggregate } from '../../../machines/checkout-session.aggregate.ts';
import { created, paymentFixture, sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../../machines/checkout-session.types.ts';
import { givenWhenThen } from '../../actors/given-when-then.ts';
import { createManualClock } from '../../shared/clock.ts';
import { createEvmGasFeeQuoter, SWEEP_GAS_PER_ADDRESS } from './evm-gas-fee.ts';
import { ethereum } from './networks/ethereum.ts';
import { createNetworkRegistry } from './networks/registry.ts';

/** A node whose gas price is not round, as most are: 23.456789123 gwei. */
const GAS_PRICE_WEI = 23_456_789_123n;

/** A quoter for Ethereum asking a local JSON-RPC node for its gas price; ETH at 3000.5 USDC and 3000.5 DAI. */
async function quoterOnNode(t: { teardown(fn: () => void): void }) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${GAS_PRICE_WEI.toString(16)}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const registry = createNetworkRegistry({
    networks: [ethereum],
    rpc: { 1: { http: [`http://127.0.0.1:${port}`], ws: [] } },
  });
  const quoter = createEvmGasFeeQuoter({
    registry,
    clock: createManualClock(),
    nativePrices: new Map([
      ['1_USDC', '3000.5'],
      ['1_DAI', '3000.5'],
    ]),
  });
  const network = registry.railNetworks('live')[0]!;
  const asset = (symbol: string) => network.assets.find((a) => a.symbol === symbol)!;
  return { quote: (symbol: string) => quoter.quote(network, asset(symbol)) };
}

test('the sweep gas priced in a 6-decimal token is rounded up to its whole unit; in an 18-decimal one it stays at the 10^-8 unit', async (t) => {
  const { quote } = await quoterOnNode(t);
  // 160,000 gas × 23.456789123 gwei = 0.00375308625968 ETH; × 3000.5 = 11.2611353...
  t.deepEqual(await quote('USDC'), { gas: SWEEP_GAS_PER_ADDRESS, amount: 1_126_113_600n }, '11.261136 USDC');
  t.deepEqual(await quote('DAI'), { gas: SWEEP_GAS_PER_ADDRESS, amount: 1_126_113_533n }, '11.26113533 DAI');
  t.deepEqual(await quote('ETH'), { gas: SWEEP_GAS_PER_ADDRESS, amount: 375_309n }, '0.00375309 ETH');
});

test('given gas collection on and a USDC session, when the payer sends exactly the amount due with the quoted gas, then the session completes with nothing overpaid', async (t) => {
  const { quote } = await quoterOnNode(t);
  const gas = (await quote('USDC'))!;
  const session = sessionFixture();
  const withGas = {
    ...session,
    addresses: session.addresses.map((a) => ({ ...a, gas: gas.gas.toString(), gasAmount: gas.amount.toString() })),
  };
  const given = givenWhenThen(checkoutSessionAggregate);
  const events: CheckoutSessionEvent[] = [created(withGas)];
  events.push(...given(events).when({ type: 'SelectPaymentMethod', addressId: 'addr-usdc' }));
  const chosen = given(events).state().context.session!;
  const amountDue = chosen.paymentIntent.paymentMethod!.amountDue;
  t.is(amountDue, '14261136', '3 + 11.261136 USDC');
  const payment = { ...paymentFixture('t1', '0'), amountRaw: amountDue, amount: (BigInt(amountDue) * 100n).toString() };
  events.push(...given(events).when({ type: 'RecordTransfer', payment }));
  events.push(...given(events).when({ type: 'ConfirmTransfer', transferId: 't1' }));
  t.false(
    events.some((e) => e.type === 'OverpaymentReceived'),
    'no overpayment',
  );
  const paid = given(events).state().context.session!;
  t.like(paid, { status: 'complete', amountTotal: '1426113600', amountReceived: '1426113600', amountOverpaid: '0' });
});
