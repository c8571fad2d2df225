import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import type { Organization } from '../actors/organization.ts';
import type { RailNetwork } from '../chain-ingest/rail.ts';
import type { Environment } from '../event-store/event-store.ts';
import { renderCheckoutPage } from './checkout-page.ts';
import { payerStatus } from './checkout-status.ts';

const SAMPLE_ADDRESS = '0x00000000000000000000000000000000000d3b05';
const HOUR_MS = 60 * 60 * 1000;

/**
 * The hosted checkout page as a payer would see it, for the branding settings: an open session of
 * one sample item, offering the assets of the environment's networks (the tests' sample asset when
 * it has none), in the organization's name and footer with `brand` in place of its saved colour
 * and logo. Rendered by the checkout page's own code, without its script.
 */
export function renderCheckoutPreview(input: {
  org: Organization | null;
  brand: { brandColor: string | null; brandLogo: string | null };
  environment: Environment;
  networks: readonly RailNetwork[];
  now: number;
}): string {
  const sample = sessionFixture();
  const at = new Date(input.now).toISOString();
  const addresses: SessionAddress[] = input.networks
    .flatMap((network) => network.assets.map((asset) => ({ network, asset })))
    .slice(0, 4)
    .map(({ network, asset }) => ({
      ...sample.addresses[0]!,
      id: `preview-${asset.id}`,
      network: network.network,
      asset,
      paymentAddress: SAMPLE_ADDRESS,
    }));
  const session = sessionFixture({
    environment: input.environment,
    createdAt: at,
    updatedAt: at,
    expiresAt: new Date(input.now + HOUR_MS).toISOString(),
    ...(addresses.length > 0 ? { addresses } : {}),
    lineItems: {
      object: 'list',
      data: [
        {
          description: 'Sample item',
          quantity: 1,
          currency: sample.currency,
          amountSubtotal: sample.amountSubtotal,
          amountTotal: sample.amountTotal,
          price: {
            id: 'preview-price',
            productId: 'preview-product',
            product: { id: 'preview-product', name: 'Sample item', description: null, isActive: true },
            type: 'one_time',
            currency: sample.currency,
            unitAmount: sample.amountSubtotal,
            interval: null,
            intervalCount: null,
            isActive: true,
          },
        },
      ],
    },
  });
  const names = (network: string) => input.networks.find((n) => n.network === network)?.name ?? network;
  const org = input.org ? { ...input.org, ...input.brand } : null;
  return renderCheckoutPage({
    session,
    org,
    status: payerStatus(session, names, input.now, undefined, undefined, org),
    names,
    products: new Map(),
    preview: true,
  });
}
