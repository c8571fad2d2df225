import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EnergyRentalError, httpEnergyRental } from './energy-rental.ts';
import { parseTronEnergyEnv, TronConfigError } from './tron-setup.ts';

/** A provider double on 127.0.0.1 answering `answer` (status, body) and keeping what it was sent. */
async function provider(t: import('ava').ExecutionContext, status: number, answer: unknown) {
  const received: unknown[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rent`, received };
}

test('the HTTP adapter posts the order and reads the receipt', async (t) => {
  const p = await provider(t, 200, { orderId: 'o-7', costSun: '4200000' });
  const receipt = await httpEnergyRental(p.url).rent({ network: 'tron', receiver: 'TXYZ', energy: 65_000n });
  t.deepEqual(receipt, { orderId: 'o-7', costSun: 4_200_000n });
  t.deepEqual(p.received, [{ network: 'tron', receiver: 'TXYZ', energy: '65000' }]);
});

test('a refusal or an unreadable answer is an EnergyRentalError', async (t) => {
  const refused = await provider(t, 402, { error: 'no balance' });
  await t.throwsAsync(httpEnergyRental(refused.url).rent({ network: 'tron', receiver: 'T', energy: 1n }), {
    instanceOf: EnergyRentalError,
    message: /HTTP 402/,
  });
  const odd = await provider(t, 200, { orderId: 'x', costSun: 12 });
  await t.throwsAsync(httpEnergyRental(odd.url).rent({ network: 'tron', receiver: 'T', energy: 1n }), {
    instanceOf: EnergyRentalError,
  });
});

test('configuration: burn by default; staked waits or burns; rented needs an http(s) URL; mistakes are named', (t) => {
  t.deepEqual(parseTronEnergyEnv({}), { policy: { source: 'burn' }, rentalUrl: null });
  t.deepEqual(parseTronEnergyEnv({ WEIR_TRON_ENERGY_SOURCE: 'staked' }), {
    policy: { source: 'staked', whenShort: 'burn' },
    rentalUrl: null,
  });
  t.deepEqual(parseTronEnergyEnv({ WEIR_TRON_ENERGY_SOURCE: 'staked', WEIR_TRON_ENERGY_WHEN_SHORT: 'wait' }), {
    policy: { source: 'staked', whenShort: 'wait' },
    rentalUrl: null,
  });
  t.deepEqual(
    parseTronEnergyEnv({ WEIR_TRON_ENERGY_SOURCE: 'rented', WEIR_TRON_ENERGY_RENTAL_URL: 'https://rent.example/api' }),
    { policy: { source: 'rented' }, rentalUrl: 'https://rent.example/api' },
  );
  const refusals: [Record<string, string>, RegExp][] = [
    [{ WEIR_TRON_ENERGY_SOURCE: 'free' }, /must be burn, staked or rented/],
    [{ WEIR_TRON_ENERGY_SOURCE: 'rented' }, /needs WEIR_TRON_ENERGY_RENTAL_URL/],
    [{ WEIR_TRON_ENERGY_SOURCE: 'rented', WEIR_TRON_ENERGY_RENTAL_URL: 'ftp://x' }, /http or https/],
    [{ WEIR_TRON_ENERGY_SOURCE: 'staked', WEIR_TRON_ENERGY_WHEN_SHORT: 'later' }, /burn or wait/],
    [{ WEIR_TRON_ENERGY_WHEN_SHORT: 'wait' }, /staked only/],
    [{ WEIR_TRON_ENERGY_RENTAL_URL: 'https://x' }, /rented only/],
  ];
  for (const [env, message] of refusals)
    t.throws(() => parseTronEnergyEnv(env), { instanceOf: TronConfigError, message });
});
