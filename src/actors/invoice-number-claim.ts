import type { Aggregate } from './aggregate.ts';
import type { CommandContext, CommandHandler } from './command-handler.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { Collection, ReadDocument } from '../read-store/read-store.ts';
import { ConflictError } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';
import {
  defaultInvoiceSetting,
  type InvoiceSetting,
  organizationAggregate,
  organizationRecordId,
} from './organization.ts';

/**
 * A reservation of an invoice number for one tenant. The stream id is derived from the tenant and
 * the number, so two invoices asking for `INV-000007` at once append to the same stream and the
 * log's expected-revision check lets only one of them hold it: numbers are unique per tenant
 * even when requests race, whatever read store is used.
 */
export type InvoiceNumberClaim = {
  number: string;
  invoiceId: string;
  organizationId: string;
  environment: Environment;
  claimedAt: string;
};

export type InvoiceNumberClaimEvent = { type: 'InvoiceNumberClaimed'; data: { claim: InvoiceNumberClaim } };

export type InvoiceNumberClaimCommand = { type: 'ClaimInvoiceNumber'; claim: Omit<InvoiceNumberClaim, 'claimedAt'> };

export const invoiceNumberClaimId = (
  tenant: { organizationId: string; environment: Environment },
  number: string,
): string => deterministicId(`invoice_number:${tenant.organizationId}:${tenant.environment}:${number}`);

/** 409: `number` is held by invoice `invoiceId`. */
const numberInUse = (number: string, invoiceId: string) =>
  new ConflictError(
    `number: invoice number ${number} is already used by invoice ${invoiceId}`,
    'invoice_number_in_use',
  );

export const invoiceNumberClaimAggregate: Aggregate<
  InvoiceNumberClaim | null,
  InvoiceNumberClaimEvent,
  InvoiceNumberClaimCommand
> = {
  category: 'invoice_number_claim',
  initialState: () => null,
  evolve: (_claim, event) => event.data.claim,
  decide(claim, command, { now }) {
    if (claim && claim.invoiceId === command.claim.invoiceId) return [];
    if (claim) throw numberInUse(command.claim.number, claim.invoiceId);
    return [{ type: 'InvoiceNumberClaimed', data: { claim: { ...command.claim, claimedAt: now } } }];
  },
};

/** `INV-000042` for the 42nd invoice of a tenant (or the organization's own prefix). */
export const formatInvoiceNumber = (sequence: number, prefix = 'INV-'): string =>
  `${prefix}${String(sequence).padStart(6, '0')}`;

/** The organization's invoice numbering, as its record says now (the defaults until it changes them). */
export async function invoiceNumbering(
  commands: CommandHandler,
  tenant: { organizationId: string; environment: Environment },
): Promise<InvoiceSetting> {
  const { state } = await commands.load(
    organizationAggregate,
    organizationRecordId(tenant.organizationId, tenant.environment),
    tenant,
  );
  return { ...defaultInvoiceSetting, ...state?.invoiceSetting };
}

/**
 * Refuse `number` when another invoice holds it, writing nothing: a request checks it before what it
 * checks last (its customer), so a refusal naming only the customer says the number is free too. The
 * claim itself (`claimInvoiceNumber`) still decides a race.
 */
export async function assertInvoiceNumberFree(
  commands: CommandHandler,
  tenant: { organizationId: string; environment: Environment },
  invoiceId: string,
  number: string,
): Promise<void> {
  const { state } = await commands.load(invoiceNumberClaimAggregate, invoiceNumberClaimId(tenant, number), tenant);
  if (state && state.invoiceId !== invoiceId) throw numberInUse(number, state.invoiceId);
}

const MAX_NUMBER_ATTEMPTS = 50;

/**
 * Reserve an invoice number for `invoiceId`: the one asked for (a ConflictError when another
 * invoice holds it), or the next free `INV-…` after the count of the tenant's invoices. Each
 * number is a claim stream in the log, so two requests racing for the same number cannot both
 * win: the loser moves on to the next one. Claiming again for the same invoice is a no-op.
 */
export async function claimInvoiceNumber(
  deps: { commands: CommandHandler; invoices: Collection<ReadDocument> },
  ctx: CommandContext,
  invoiceId: string,
  wanted: string | undefined,
): Promise<string> {
  const tenant = { organizationId: ctx.organizationId, environment: ctx.environment };
  const claim = (number: string) =>
    deps.commands.handle(
      invoiceNumberClaimAggregate,
      invoiceNumberClaimId(tenant, number),
      {
        type: 'ClaimInvoiceNumber',
        claim: { number, invoiceId, ...tenant },
      },
      ctx,
    );
  if (wanted !== undefined) {
    await claim(wanted);
    return wanted;
  }
  const { invoicePrefix, sequenceOffset } = await invoiceNumbering(deps.commands, tenant);
  let sequence = Math.max(1, (await deps.invoices.count(tenant)) + 1 + sequenceOffset);
  for (let attempt = 0; attempt < MAX_NUMBER_ATTEMPTS; attempt++, sequence++) {
    const number = formatInvoiceNumber(sequence, invoicePrefix);
    try {
      await claim(number);
      return number;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
  throw new ConflictError(
    `could not find a free invoice number after ${formatInvoiceNumber(sequence, invoicePrefix)}; send number`,
    'invoice_number_in_use',
  );
}
