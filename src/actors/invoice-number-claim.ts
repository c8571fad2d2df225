import type { Aggregate } from './aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import { ConflictError } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';

/**
 * A reservation of an invoice number for one tenant. The stream id is derived from the tenant and
 * the number, so two invoices asking for `INV-000007` at once append to the same stream and the
 * log's expected-revision check lets only one of them hold it: numbers are unique per tenant
 * even when requests race, whatever read store is used.
 */
export type InvoiceNumberClaim = { number: string; invoiceId: string; organizationId: string; environment: Environment; claimedAt: string };

export type InvoiceNumberClaimEvent = { type: 'InvoiceNumberClaimed'; data: { claim: InvoiceNumberClaim } };

export type InvoiceNumberClaimCommand = { type: 'ClaimInvoiceNumber'; claim: Omit<InvoiceNumberClaim, 'claimedAt'> };

export const invoiceNumberClaimId = (tenant: { organizationId: string; environment: Environment }, number: string): string =>
  deterministicId(`invoice_number:${tenant.organizationId}:${tenant.environment}:${number}`);

export const invoiceNumberClaimAggregate: Aggregate<InvoiceNumberClaim | null, InvoiceNumberClaimEvent, InvoiceNumberClaimCommand> = {
  category: 'invoice_number_claim',
  initialState: () => null,
  evolve: (_claim, event) => event.data.claim,
  decide(claim, command, { now }) {
    if (claim && claim.invoiceId === command.claim.invoiceId) return [];
    if (claim) throw new ConflictError(`number: invoice number ${command.claim.number} is already used by invoice ${claim.invoiceId}`, 'invoice_number_in_use');
    return [{ type: 'InvoiceNumberClaimed', data: { claim: { ...command.claim, claimedAt: now } } }];
  },
};

/** `INV-000042` for the 42nd invoice of a tenant. */
export const formatInvoiceNumber = (sequence: number): string => `INV-${String(sequence).padStart(6, '0')}`;
