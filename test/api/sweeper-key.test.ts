import test from 'ava';
import { startTestWeir } from '../support/weir-harness.ts';

const BASE_SEPOLIA = 84_532;
/** Base Sepolia offered beside the local chain; no follower runs, so its endpoint is never contacted. */
const chainEnv = {
  [`WEIR_RPC_${BASE_SEPOLIA}`]: 'http://127.0.0.1:9',
  [`WEIR_FACTORY_${BASE_SEPOLIA}`]: '0x00000000000000000000000000000000000fac70',
};

test('without WEIR_SWEEPER_KEY the start names the networks whose deposits go unswept', async (t) => {
  const lines: string[] = [];
  const weir = await startTestWeir(t, { chainEnv }, { evmFollowers: false, log: (line) => lines.push(line) });
  t.truthy(weir.url);
  const warning = lines.find((line) => line.includes('no WEIR_SWEEPER_KEY'));
  t.truthy(warning, lines.join('\n'));
  t.regex(warning!, /Base Sepolia/);
  t.notRegex(warning!, /Weir Testnet/);
});

test("with the operator's key every network sweeps and the start warns of nothing", async (t) => {
  const lines: string[] = [];
  await startTestWeir(
    t,
    { chainEnv, sweeperKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
    { evmFollowers: false, log: (line) => lines.push(line) },
  );
  t.false(
    lines.some((line) => line.includes('no WEIR_SWEEPER_KEY')),
    lines.join('\n'),
  );
});
