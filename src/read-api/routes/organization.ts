import Router from '@koa/router';
import {
  organizationAggregate,
  organizationRecordId,
  type BusinessDetails,
  type PaymentSetting,
} from '../../actors/organization.ts';
import { COLLECTIONS, type OrganizationDoc } from '../../projections/collections.ts';
import { publicOrganization } from '../../projections/public-views.ts';
import { NotFoundError, ValidationError } from '../../shared/errors.ts';
import {
  asObject,
  EVM_ADDRESS,
  evmChecksumHolds,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalNumber,
  optionalObject,
  optionalString,
  optionalUrl,
  requiredString,
} from '../../shared/input.ts';
import { CURRENCIES } from '../../actors/line-items.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { createBrandLogoStore, parseMultipart } from '../brand-logo.ts';
import { commandFor } from '../command.ts';
import { mountInvoiceSetting } from './invoice-setting.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const TRON_ADDRESS = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/**
 * The organization of the key's environment: business details, branding, payment settings and
 * payment methods (wallet addresses per chain, the reference API's withdrawal addresses).
 */
export function organizationRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/api/v1/organization' });
  const orgs = deps.readStore.collection<OrganizationDoc>(COLLECTIONS.organizations);
  const recordId = (ctx: ApiContext) =>
    organizationRecordId(ctx.state.tenant.organizationId, ctx.state.tenant.environment);
  const load = async (ctx: ApiContext): Promise<OrganizationDoc> => {
    const org = await orgs.get(recordId(ctx));
    if (!org) throw new NotFoundError('organization', ctx.state.tenant.organizationId);
    return org;
  };
  /**
   * The organization as the reference shows it. An API key has no user behind it, so there is no
   * owner (`ownerId` null; the dashboard issue adds users), and Weir gates no feature behind a request.
   */
  const present = (org: OrganizationDoc) => ({
    ...publicOrganization(org),
    type: org.kind,
    ownerId: null,
    noOfEmployees: org.noOfEmployees ?? null,
    monthlyPaymentVolume: org.monthlyPaymentVolume ?? null,
    featureAccessRequests: [],
  });
  const done = (message: string) => ({ message, statusCode: 200 });
  const logos = createBrandLogoStore(deps);
  const run = (ctx: ApiContext, command: Parameters<typeof organizationAggregate.decide>[1]) =>
    commandFor(deps, ctx, organizationAggregate, recordId(ctx), command);

  const chainIds = (ctx: ApiContext) => new Set(deps.rail.networks(ctx.state.tenant.environment).map((n) => n.chainId));

  /**
   * The wallet address, checked against the address format of the chain's kind, then by the
   * chain's rail: an address it cannot pay out to (funds lost, or Weir's own contracts) is refused.
   */
  function walletAddress(ctx: ApiContext, o: Record<string, unknown>, chainId: number): string {
    const address = requiredString(o, 'address', '', { max: 128 });
    const network = deps.rail.networks(ctx.state.tenant.environment).find((n) => n.chainId === chainId);
    const formats = {
      evm: [EVM_ADDRESS, 'an EVM address (0x and 40 hex digits)'],
      solana: [SOLANA_ADDRESS, 'a base58 Solana address'],
      tron: [TRON_ADDRESS, 'a base58 Tron address starting with T'],
    } as const;
    const [pattern, hint] = formats[network?.kind ?? 'evm'];
    if (!pattern.test(address))
      throw new ValidationError('address', `must be ${hint} on chain ${chainId}`, 'incorrect_address');
    if (pattern === EVM_ADDRESS && !evmChecksumHolds(address)) {
      throw new ValidationError(
        'address',
        'fails its EIP-55 checksum (mixed case): check it for a typo, or give it in lower case',
        'incorrect_address',
      );
    }
    const unpayable = network ? deps.rail.unpayableAddress({ network, address }) : null;
    if (unpayable)
      throw new ValidationError(
        'address',
        `${address} ${unpayable}; give a wallet the merchant holds the key to`,
        'address_not_payable',
      );
    return address;
  }

  router.get('/', async (ctx) => {
    ctx.body = present(await load(ctx));
  });

  router.put('/', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const changes: Partial<BusinessDetails> = {};
    const text = (key: keyof BusinessDetails, max = 200) => {
      const v = optionalString(body, key, '', { max });
      if (v !== undefined) (changes as Record<string, unknown>)[key] = v;
    };
    const name = optionalString(body, 'name', '', { min: 1, max: 200 });
    if (name !== undefined) changes.name = name;
    for (const key of ['phone', 'supportPhone', 'companyIdentificationNumber', 'taxIdentificationNumber'] as const)
      text(key, 64);
    for (const key of ['noOfEmployees', 'monthlyPaymentVolume'] as const) text(key, 64);
    for (const key of ['email', 'supportEmail'] as const) {
      const v = optionalString(body, key, '', { max: 254, pattern: EMAIL, hint: 'must be an email address' });
      if (v !== undefined) changes[key] = v;
    }
    for (const key of ['websiteUrl', 'supportUrl', 'privacyUrl', 'termsUrl'] as const) {
      const v = optionalUrl(body, key);
      if (v !== undefined) changes[key] = v;
    }
    const address = optionalObject(body, 'addressDetails');
    if (address) {
      const current = (await load(ctx)).addressDetails;
      const next = { ...current };
      for (const key of ['line1', 'line2', 'city', 'state', 'postalCode', 'country'] as const) {
        const v = optionalString(address, key, 'addressDetails', { max: 200 });
        if (v !== undefined) next[key] = v;
      }
      changes.addressDetails = next;
    }
    if (Object.keys(changes).length === 0)
      throw new ValidationError(null, 'nothing to update: send at least one business detail field');
    await run(ctx, { type: 'UpdateBusinessDetails', changes });
    ctx.body = present(await load(ctx));
  });

  /**
   * The reference's form: `brandColor` and a `brandLogo` file (checked here, stored once the rest
   * is valid, then served from this Weir). Answers the fields and the file.
   */
  function brandForm(ctx: ApiContext, bytes: Buffer): { body: Record<string, unknown>; logo: Buffer | null } {
    const body: Record<string, unknown> = {};
    let logo: Buffer | null = null;
    for (const part of parseMultipart(bytes, ctx.get('content-type'))) {
      if (part.name === 'brandColor' && part.filename === null) body.brandColor = part.data.toString('utf8');
      else if (part.name === 'brandLogo' && part.filename !== null && logo === null) {
        logos.check(part.data);
        logo = part.data;
      } else if (part.name === 'brandLogo')
        throw new ValidationError('brandLogo', 'must be one file (a form part with a filename)');
      else throw new ValidationError(part.name, 'is not a field of the brand form: brandColor, brandLogo');
    }
    return { body, logo };
  }

  router.put('/brand', async (ctx) => {
    const form = ctx.state.multipart ? brandForm(ctx, ctx.state.multipart) : null;
    const body = form ? { ...form.body, brandLogo: undefined } : asObject(ctx.state.body, '');
    const brandColor =
      optionalString(body, 'brandColor', '', { pattern: HEX_COLOR, hint: 'must be a hex color such as #1a2b3c' }) ??
      null;
    const uploaded = form?.logo ?? null;
    let brandLogo = optionalUrl(body, 'brandLogo') ?? (await load(ctx)).brandLogo;
    if (!brandColor && body.brandLogo === undefined && !uploaded)
      throw new ValidationError('brandColor', 'is required', 'parameter_missing');
    if (uploaded) brandLogo = await logos.save(ctx.state.tenant, uploaded);
    await run(ctx, { type: 'UpdateBranding', brandColor: brandColor ?? (await load(ctx)).brandColor, brandLogo });
    ctx.body = present(await load(ctx));
  });

  router.delete('/brand-logo', async (ctx) => {
    const org = await load(ctx);
    await run(ctx, { type: 'UpdateBranding', brandColor: org.brandColor, brandLogo: null });
    ctx.body = done('brand logo deleted');
  });

  router.get('/payment-setting', async (ctx) => {
    const org = await load(ctx);
    const allowedChains = [...new Set(org.withdrawalAddresses.map((w) => w.chainId))].map((chainId) => ({
      chainId,
      withdrawalAddress: org.withdrawalAddresses.find((w) => w.chainId === chainId && w.isDefault)?.address ?? null,
    }));
    ctx.body = { id: org.id, createdAt: org.createdAt, updatedAt: org.updatedAt, ...org.paymentSetting, allowedChains };
  });

  router.put('/payment-setting', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const changes: Partial<PaymentSetting> = {};
    const preferredChainId = optionalInteger(body, 'preferredChainId', '', { min: 1 });
    if (preferredChainId !== undefined) {
      if (!chainIds(ctx).has(preferredChainId))
        throw new ValidationError(
          'preferredChainId',
          `chain ${preferredChainId} is not offered in the ${ctx.state.tenant.environment} environment`,
        );
      changes.preferredChainId = preferredChainId;
    }
    const preferredCurrency = optionalEnum(body, 'preferredCurrency', CURRENCIES);
    if (preferredCurrency) changes.preferredCurrency = preferredCurrency;
    for (const key of ['allowSwap', 'applyGasFee', 'allowSplitPayments'] as const) {
      const v = optionalBoolean(body, key);
      if (v !== undefined) changes[key] = v;
    }
    if (optionalBoolean(body, 'applyFee'))
      throw new ValidationError('applyFee', 'Weir charges no processing fee, so there is none to collect');
    const slippage = optionalNumber(body, 'slippagePercentage', '', { min: 0, max: 100 });
    if (slippage !== undefined) changes.slippagePercentage = slippage;
    if (Object.keys(changes).length === 0)
      throw new ValidationError(null, 'nothing to update: send at least one payment setting');
    await run(ctx, { type: 'UpdatePaymentSetting', changes });
    const org = await load(ctx);
    ctx.body = { id: org.id, createdAt: org.createdAt, updatedAt: org.updatedAt, ...org.paymentSetting };
  });

  router.get('/withdrawal-addresses', async (ctx) => {
    const org = await load(ctx);
    // A bare array, as the reference answers here (unlike its other lists).
    ctx.body = org.withdrawalAddresses;
  });

  router.post('/withdrawal-addresses', async (ctx) => {
    const body = asObject(ctx.state.body, '');
    const chainId = optionalInteger(body, 'chainId', '', { min: 1 });
    if (chainId === undefined) throw new ValidationError('chainId', 'is required', 'parameter_missing');
    if (!chainIds(ctx).has(chainId)) {
      throw new ValidationError(
        'chainId',
        `chain ${chainId} is not offered in the ${ctx.state.tenant.environment} environment; see GET /api/v1/chains`,
      );
    }
    const address = walletAddress(ctx, body, chainId);
    const name = optionalString(body, 'name', '', { max: 100 }) ?? `Wallet on chain ${chainId}`;
    const id = idsOf(ctx)();
    await run(ctx, { type: 'AddWithdrawalAddress', id, name, address, chainId });
    ctx.body = (await load(ctx)).withdrawalAddresses.find((w) => w.id === id);
  });

  const findAddress = async (ctx: ApiContext) => {
    const found = (await load(ctx)).withdrawalAddresses.find((w) => w.id === ctx.params.id);
    if (!found) throw new NotFoundError('withdrawal address', ctx.params.id!);
    return found;
  };

  router.get('/withdrawal-addresses/:id', async (ctx) => {
    ctx.body = await findAddress(ctx);
  });

  router.put('/withdrawal-addresses/:id', async (ctx) => {
    const current = await findAddress(ctx);
    const body = asObject(ctx.state.body, '');
    const name = optionalString(body, 'name', '', { min: 1, max: 100 }) ?? current.name;
    const address = body.address === undefined ? current.address : walletAddress(ctx, body, current.chainId);
    await run(ctx, { type: 'UpdateWithdrawalAddress', id: current.id, name, address });
    ctx.body = await findAddress(ctx);
  });

  router.delete('/withdrawal-addresses/:id', async (ctx) => {
    const current = await findAddress(ctx);
    await run(ctx, { type: 'RemoveWithdrawalAddress', id: current.id });
    ctx.body = done('withdrawal address deleted');
  });

  router.post('/withdrawal-addresses/:id/mark-as-default', async (ctx) => {
    const current = await findAddress(ctx);
    await run(ctx, { type: 'MarkWithdrawalAddressDefault', id: current.id });
    ctx.body = done('withdrawal address marked as default');
  });

  mountInvoiceSetting(router, deps);

  return router;
}
