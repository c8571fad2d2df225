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
import { EVM_ADDRESS, evmChecksumHolds, shownAddress } from '../../shared/evm-address.ts';
import { organizationOwnerId } from '../../tenancy/organization-owner.ts';
import { type ApiContext, type ApiDeps, type ApiState, idsOf } from '../api-context.ts';
import { createBrandLogoStore, parseMultipart } from '../brand-logo.ts';
import { commandFor } from '../command.ts';
import {
  BrandForm,
  BrandUpdate,
  BusinessDetailsUpdate,
  MessageSchema,
  OrganizationSchema,
  PaymentSettingSchema,
  PaymentSettingUpdate,
  PaymentSettingWithChainsSchema,
  WithdrawalAddressCreate,
  WithdrawalAddressSchema,
  WithdrawalAddressUpdate,
} from '../schema/organization.ts';
import { DeletedMessage, idParams, invalidFields, notFound, z } from '../schema/fields.ts';
import { parseWith, schemaRoutes } from '../schema/route.ts';
import { mountCardProcessor } from './card-processor.ts';
import { mountInvoiceSetting } from './invoice-setting.ts';

const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const TRON_ADDRESS = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/** A wallet as answers show it: an EVM address in its checksum, whatever case it was given in. */
const shownWallet = <T extends { address: string }>(wallet: T): T => ({
  ...wallet,
  address: shownAddress(wallet.address),
});
const shownOrNull = (address: string | undefined): string | null =>
  address === undefined ? null : shownAddress(address);

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
   * The organization as the reference shows it: `ownerId` its first owner among the dashboard users
   * (null while it has none), and Weir gates no feature behind a request.
   */
  const present = async (org: OrganizationDoc) => ({
    ...publicOrganization(org),
    type: org.kind,
    ownerId: await organizationOwnerId(deps.readStore, org.organizationId),
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
  function walletAddress(ctx: ApiContext, address: string, chainId: number): string {
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

  const api = schemaRoutes(router, { tag: 'Organization', auth: 'secretKey' });
  const addressParams = idParams('withdrawal address');
  const offered = (ctx: ApiContext, field: string, chainId: number, hint = '') => {
    if (!chainIds(ctx).has(chainId))
      throw new ValidationError(
        field,
        `chain ${chainId} is not offered in the ${ctx.state.tenant.environment} environment${hint}`,
      );
  };

  api.route({ method: 'get', path: '/', summary: 'Read the organization', response: OrganizationSchema }, async (ctx) =>
    present(await load(ctx)),
  );

  api.route(
    {
      method: 'put',
      path: '/',
      summary: 'Update business details',
      description:
        'Only the fields sent change; `null` clears a field (all but `name`); `addressDetails` changes only the parts it gives.',
      body: BusinessDetailsUpdate,
      response: OrganizationSchema,
      errors: [invalidFields()],
    },
    async (ctx, { body }) => {
      const { addressDetails, ...fields } = body;
      const changes: Partial<BusinessDetails> = {};
      for (const [key, value] of Object.entries(fields))
        if (value !== undefined) (changes as Record<string, unknown>)[key] = value;
      if (addressDetails) {
        const next = { ...(await load(ctx)).addressDetails };
        for (const [key, value] of Object.entries(addressDetails))
          if (value !== undefined) (next as Record<string, unknown>)[key] = value;
        changes.addressDetails = next;
      }
      if (Object.keys(changes).length === 0)
        throw new ValidationError(null, 'nothing to update: send at least one business detail field');
      await run(ctx, { type: 'UpdateBusinessDetails', changes });
      return present(await load(ctx));
    },
  );

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

  // The body is JSON or a multipart form, so the handler parses it (with BrandUpdate) once it knows which.
  api.route(
    {
      method: 'put',
      path: '/brand',
      summary: 'Update the brand',
      description:
        'JSON (`brandColor`, `brandLogo` URL) or `multipart/form-data` with a `brandColor` field and a `brandLogo` file, stored and served by Weir.',
      bodyTypes: { 'application/json': BrandUpdate, 'multipart/form-data': BrandForm },
      response: OrganizationSchema,
      errors: [invalidFields('url_invalid', 'invalid_multipart', 'unsupported_image_type')],
    },
    async (ctx) => {
      const form = ctx.state.multipart ? brandForm(ctx, ctx.state.multipart) : null;
      const raw = ctx.state.body;
      const body = parseWith(BrandUpdate, form ? form.body : raw);
      const brandColor = body.brandColor ?? null;
      const uploaded = form?.logo ?? null;
      let brandLogo = body.brandLogo ?? (await load(ctx)).brandLogo;
      const logoGiven = !form && (raw as Record<string, unknown>).brandLogo !== undefined;
      if (!brandColor && !logoGiven && !uploaded)
        throw new ValidationError('brandColor', 'is required', 'parameter_missing');
      if (uploaded) brandLogo = await logos.save(ctx.state.tenant, uploaded);
      await run(ctx, { type: 'UpdateBranding', brandColor: brandColor ?? (await load(ctx)).brandColor, brandLogo });
      return present(await load(ctx));
    },
  );

  api.route(
    { method: 'delete', path: '/brand-logo', summary: 'Remove the brand logo', response: MessageSchema },
    async (ctx) => {
      const org = await load(ctx);
      await run(ctx, { type: 'UpdateBranding', brandColor: org.brandColor, brandLogo: null });
      return done('brand logo deleted');
    },
  );

  api.route(
    {
      method: 'get',
      path: '/payment-setting',
      summary: 'Read the payment setting',
      response: PaymentSettingWithChainsSchema,
    },
    async (ctx) => {
      const org = await load(ctx);
      const allowedChains = [...new Set(org.withdrawalAddresses.map((w) => w.chainId))].map((chainId) => ({
        chainId,
        withdrawalAddress: shownOrNull(
          org.withdrawalAddresses.find((w) => w.chainId === chainId && w.isDefault)?.address,
        ),
      }));
      return { id: org.id, createdAt: org.createdAt, updatedAt: org.updatedAt, ...org.paymentSetting, allowedChains };
    },
  );

  api.route(
    {
      method: 'put',
      path: '/payment-setting',
      summary: 'Update the payment setting',
      body: PaymentSettingUpdate,
      response: PaymentSettingSchema,
      errors: [invalidFields()],
    },
    async (ctx, { body }) => {
      const changes: Partial<PaymentSetting> = {};
      if (body.preferredChainId !== undefined) {
        offered(ctx, 'preferredChainId', body.preferredChainId);
        changes.preferredChainId = body.preferredChainId;
      }
      if (body.preferredCurrency) changes.preferredCurrency = body.preferredCurrency;
      for (const key of ['allowSwap', 'applyGasFee', 'allowSplitPayments'] as const)
        if (body[key] !== undefined) changes[key] = body[key];
      if (body.slippagePercentage !== undefined) changes.slippagePercentage = body.slippagePercentage;
      if (Object.keys(changes).length === 0)
        throw new ValidationError(null, 'nothing to update: send at least one payment setting');
      await run(ctx, { type: 'UpdatePaymentSetting', changes });
      const org = await load(ctx);
      return { id: org.id, createdAt: org.createdAt, updatedAt: org.updatedAt, ...org.paymentSetting };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/withdrawal-addresses',
      summary: 'List withdrawal addresses',
      description: 'A bare array, as the reference answers here (unlike its other lists).',
      response: z.array(WithdrawalAddressSchema),
    },
    async (ctx) => (await load(ctx)).withdrawalAddresses.map(shownWallet),
  );

  api.route(
    {
      method: 'post',
      path: '/withdrawal-addresses',
      summary: 'Add a withdrawal address',
      body: WithdrawalAddressCreate,
      response: WithdrawalAddressSchema,
      errors: [invalidFields('incorrect_address', 'address_not_payable', 'resource_already_exists')],
    },
    async (ctx, { body }) => {
      const chainId = body.chainId!;
      offered(ctx, 'chainId', chainId, '; see GET /api/v1/chains');
      const address = walletAddress(ctx, body.address, chainId);
      const name = body.name ?? `Wallet on chain ${chainId}`;
      const id = idsOf(ctx)();
      await run(ctx, { type: 'AddWithdrawalAddress', id, name, address, chainId });
      const added = (await load(ctx)).withdrawalAddresses.find((w) => w.id === id);
      return added && shownWallet(added);
    },
  );

  const findAddress = async (ctx: ApiContext, id: string) => {
    const found = (await load(ctx)).withdrawalAddresses.find((w) => w.id === id);
    if (!found) throw new NotFoundError('withdrawal address', id);
    return found;
  };

  api.route(
    {
      method: 'get',
      path: '/withdrawal-addresses/:id',
      summary: 'Read a withdrawal address',
      params: addressParams,
      response: WithdrawalAddressSchema,
      errors: [notFound('withdrawal address')],
    },
    async (ctx, { params: { id } }) => shownWallet(await findAddress(ctx, id)),
  );

  api.route(
    {
      method: 'put',
      path: '/withdrawal-addresses/:id',
      summary: 'Update a withdrawal address',
      params: addressParams,
      body: WithdrawalAddressUpdate,
      response: WithdrawalAddressSchema,
      errors: [
        invalidFields('incorrect_address', 'address_not_payable', 'resource_already_exists'),
        notFound('withdrawal address'),
      ],
    },
    async (ctx, { params: { id }, body }) => {
      const current = await findAddress(ctx, id);
      const name = body.name ?? current.name;
      const address = body.address === undefined ? current.address : walletAddress(ctx, body.address, current.chainId);
      await run(ctx, { type: 'UpdateWithdrawalAddress', id: current.id, name, address });
      return shownWallet(await findAddress(ctx, id));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/withdrawal-addresses/:id',
      summary: 'Remove a withdrawal address',
      params: addressParams,
      response: DeletedMessage,
      errors: [notFound('withdrawal address')],
    },
    async (ctx, { params: { id } }) => {
      const current = await findAddress(ctx, id);
      await run(ctx, { type: 'RemoveWithdrawalAddress', id: current.id });
      return done(`withdrawal address ${current.id} deleted`);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/withdrawal-addresses/:id/mark-as-default',
      summary: 'Make a withdrawal address the default of its chain',
      params: addressParams,
      response: MessageSchema,
      errors: [notFound('withdrawal address')],
    },
    async (ctx, { params: { id } }) => {
      const current = await findAddress(ctx, id);
      await run(ctx, { type: 'MarkWithdrawalAddressDefault', id: current.id });
      return done('withdrawal address marked as default');
    },
  );

  mountInvoiceSetting(router, deps);
  mountCardProcessor(router, deps);

  return router;
}
