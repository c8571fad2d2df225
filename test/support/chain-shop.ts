import { apiClient, eventually } from './api-client.ts';
import { ADMIN_TOKEN } from './weir-harness.ts';

/** The session fields the chain worlds' tests read (Solana, Tron). */
export type ChainSession = {
  id: string;
  status: string;
  paymentStatus: string;
  amountTotal: string;
  amountReceived: string;
  amountOverpaid: string;
  transactionHash: string | null;
  expiresAt: string;
  addresses: {
    id: string;
    network: string;
    asset: { id: string; currency: string; address: string; decimals: number; chainId: number };
    paymentAddress: string;
    merchantAddress: string;
  }[];
  paymentIntent: {
    status: string;
    amountReceived: string;
    transactions: { transactionHash: string; amountRaw: string; status: string; late: boolean; fromAddress?: string }[];
  };
};

/**
 * A shop on a running Weir, paid on one chain: an organization named `name`, its test key, the
 * merchant's wallet on `chainId`, and a webhook endpoint for every event to `receiverUrl`; with
 * helpers to open a one-line session, read it, and wait until it holds. `url` is read at each call
 * (a world that restarts Weir keeps its port).
 */
export async function openChainShop<S extends { id: string } = ChainSession>(options: {
  url: () => string;
  name: string;
  chainId: number;
  merchant: string;
  receiverUrl: string;
  untilTimeoutMs: number;
}) {
  const created = (
    await apiClient(options.url(), ADMIN_TOKEN).post<{ organizationId: string; testSecretKey: string }>(
      '/admin/organizations',
      {
        name: options.name,
      },
    )
  ).body;
  const api = () => apiClient(options.url(), created.testSecretKey);
  const added = await api().post('/api/v1/organization/withdrawal-addresses', {
    chainId: options.chainId,
    address: options.merchant,
    name: 'treasury',
  });
  if (added.status !== 200) throw new Error(`wallet: ${JSON.stringify(added.body)}`);
  const endpoint = await api().post<{ secret: string }>('/api/v1/webhook-endpoints', {
    description: 'shop',
    url: options.receiverUrl,
    enabledEvents: { events: ['*'] },
  });
  if (endpoint.status !== 200) throw new Error(`endpoint: ${JSON.stringify(endpoint.body)}`);

  const session = async (currency: string, unitAmount: string) => {
    const r = await api().post<S>('/api/v1/checkout/sessions', {
      successUrl: 'https://shop.example/ok',
      lineItems: { data: [{ priceData: { currency, unitAmount, productData: { name: 'Thing' } }, quantity: 1 }] },
    });
    if (r.status !== 200) throw new Error(`session: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const get = async (id: string) => (await api().get<S>(`/api/v1/checkout/sessions/${id}`)).body;
  const until = (id: string, predicate: (s: S) => boolean, what: string, timeoutMs = options.untilTimeoutMs) =>
    eventually(
      async () => {
        const s = await get(id);
        return predicate(s) ? s : undefined;
      },
      what,
      timeoutMs,
    );
  return { organizationId: created.organizationId, api, endpointSecret: endpoint.body.secret, session, get, until };
}
