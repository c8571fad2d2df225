import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { startWeir, type Weir, type WeirOverrides } from '../../src/app/start-weir.ts';
import type { WeirConfig } from '../../src/app/config.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { apiClient } from './api-client.ts';
import { createLineLogger } from '../../src/shared/logger.ts';
import type { OpenApiDocuments } from '../../src/read-api/routes/api-docs.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const MERCHANT_WALLET = '0x5Ea1Fee5EA1fEe5EA1feE5EA1Fee5Ea1Fee5Ea1F';

/** The OpenAPI documents of this test file's Weirs: each route table's is built once, not by every Weir. */
const openApiDocuments: OpenApiDocuments = new Map();

/**
 * A Weir on a free port with a fresh data dir, stopped and removed when the test ends. It offers
 * the test rail (transfers published by hand, see chain-publisher.ts) unless `testRail: false`;
 * no local chain unless `localChain: true` (`['evm']`: the local EVM chain alone).
 */
export async function startTestWeir(
  t: ExecutionContext,
  config: Partial<WeirConfig> & { testRail?: boolean } = {},
  overrides: WeirOverrides = {},
): Promise<Weir & { dataDir: string }> {
  const { testRail = true, ...weirConfig } = config;
  const dataDir = weirConfig.dataDir ?? (await mkdtemp(join(tmpdir(), 'weir-test-')));
  const recent = recentLines(t, dataDir);
  const weir = await startWeir(
    { port: 0, host: '127.0.0.1', dataDir, adminToken: ADMIN_TOKEN, chainEnv: {}, ...weirConfig },
    {
      // Quiet unless the test captures the log lines itself or fails (then its last lines are printed).
      ...(overrides.log || overrides.logger ? {} : { logger: createLineLogger(recent) }),
      ...(testRail ? { extraRails: [createTestRail()] } : {}),
      openApiDocuments,
      ...overrides,
    },
  );
  t.teardown(async () => {
    await weir.stop();
    if (!config.dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  return { ...weir, dataDir };
}

const KEPT_LINES = 300;

/**
 * Keeps Weir's last log lines and prints them to stderr when the test fails: a failure seen only
 * on a loaded CI host then says what Weir was doing.
 */
function recentLines(t: ExecutionContext, dataDir: string): (line: string) => void {
  const lines: string[] = [];
  t.teardown(() => {
    if (t.passed || lines.length === 0) return;
    process.stderr.write(
      `--- the last ${lines.length} log lines of Weir in ${dataDir} (${t.title}) ---\n${lines.join('\n')}\n---\n`,
    );
  });
  return (line) => {
    if (lines.push(line) > KEPT_LINES) lines.shift();
  };
}

/** A new organization (over the admin API) with a payment method: on the test network unless `wallet` names another. */
export async function createMerchant(
  baseUrl: string,
  name = 'Acme Test Shop',
  wallet: { chainId: number; address: string } = { chainId: 7357, address: MERCHANT_WALLET },
) {
  const admin = apiClient(baseUrl, ADMIN_TOKEN);
  const created = await admin.post<{ organizationId: string; testSecretKey: string; liveSecretKey: string }>(
    '/admin/organizations',
    { name },
  );
  if (created.status !== 200) throw new Error(`org create failed: ${JSON.stringify(created.body)}`);
  const api = apiClient(baseUrl, created.body.testSecretKey);
  const added = await api.post('/api/v1/organization/withdrawal-addresses', { ...wallet, name: 'treasury' });
  if (added.status !== 200) throw new Error(`payment method failed: ${JSON.stringify(added.body)}`);
  return { ...created.body, api, live: apiClient(baseUrl, created.body.liveSecretKey) };
}

export const sessionRequest = (unitAmount = '150000000', quantity = 2) => ({
  mode: 'payment',
  successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
  cancelUrl: 'https://shop.example/cart',
  lineItems: {
    data: [{ priceData: { currency: 'usdc', unitAmount, productData: { name: 'Weir T-shirt' } }, quantity }],
  },
});

/** A checkout session of `api`'s merchant for 2.50 USDC that takes promotion codes. */
export async function promotionSession(api: ReturnType<typeof apiClient>): Promise<{ id: string; url: string }> {
  const created = await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', {
    ...sessionRequest('250000000', 1),
    allowPromotionCodes: true,
  });
  if (created.status !== 200) throw new Error(`session create failed: ${JSON.stringify(created.body)}`);
  return created.body;
}
