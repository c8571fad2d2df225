import type { Aggregate } from './aggregate.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { InvalidStateError, ValidationError } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import type { TaxRateTerms, TaxType } from '../shared/tax.ts';

/** A tax rate: a percentage (exact decimal string) added to (exclusive) or contained in (inclusive) a price. */
export type TaxRate = {
  id: string;
  organizationId: string;
  environment: Environment;
  name: string;
  description: string | null;
  country: string | null;
  /** Exact decimal, at most 4 places: `8.25`. Fixed once created, like a price's amount. */
  percentage: string;
  type: TaxType;
  isActive: boolean;
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
};

/** What an update may change: never the percentage or the type (sessions and invoices refer to them). */
export type TaxRateChanges = Partial<Pick<TaxRate, 'name' | 'description' | 'country' | 'isActive' | 'metadata'>>;

export type TaxRateEvent =
  | { type: 'TaxRateCreated'; data: { taxRate: Omit<TaxRate, 'updatedAt'> } }
  | { type: 'TaxRateUpdated'; data: { changes: TaxRateChanges; at: string } };

export type TaxRateCommand =
  | { type: 'CreateTaxRate'; taxRate: Omit<TaxRate, 'createdAt' | 'updatedAt'> }
  | { type: 'UpdateTaxRate'; changes: TaxRateChanges };

export function evolveTaxRate(rate: TaxRate | null, event: TaxRateEvent): TaxRate | null {
  switch (event.type) {
    case 'TaxRateCreated':
      return { ...event.data.taxRate, updatedAt: event.data.taxRate.createdAt };
    case 'TaxRateUpdated':
      return rate && { ...rate, ...event.data.changes, updatedAt: event.data.at };
  }
}

export const taxRateAggregate: Aggregate<TaxRate | null, TaxRateEvent, TaxRateCommand> = {
  category: 'tax_rate',
  initialState: () => null,
  evolve: evolveTaxRate,
  decide(rate, command, { now }) {
    if (command.type === 'CreateTaxRate')
      return rate ? [] : [{ type: 'TaxRateCreated', data: { taxRate: { ...command.taxRate, createdAt: now } } }];
    if (!rate) throw new InvalidStateError('tax rate does not exist', 'resource_missing');
    // Only what differs is recorded, so activating an active rate writes nothing.
    const changed = Object.fromEntries(
      Object.entries(command.changes).filter(
        ([key, value]) => value !== undefined && JSON.stringify(value) !== JSON.stringify(rate[key as keyof TaxRate]),
      ),
    ) as TaxRateChanges;
    return Object.keys(changed).length === 0 ? [] : [{ type: 'TaxRateUpdated', data: { changes: changed, at: now } }];
  },
};

export const TAX_RATES = 'tax_rates';
export type TaxRateDoc = ReadDocument & TaxRate;

/** At most this many rates on one session, invoice or line. */
export const MAX_TAX_RATES = 5;

/**
 * A request's `taxRateIds` at `field`, resolved to the tenant's active tax rates; anything else
 * (not an array, an unknown, inactive or other tenant's id, a repeat) is a 400 naming the field.
 * Undefined when the field is absent. `held`: rates the record already holds where this list
 * applies, taken though deactivated since (a rate is retired for new uses, not taken off a draft).
 */
export async function resolveTaxRateIds(
  readStore: ReadStore,
  tenant: { organizationId: string; environment: string },
  value: unknown,
  field: string,
  isDefault: boolean,
  held: ReadonlySet<string> = new Set(),
): Promise<TaxRateTerms[] | undefined> {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new ValidationError(field, 'must be an array of tax rate ids');
  if (value.length > MAX_TAX_RATES) throw new ValidationError(field, `must have at most ${MAX_TAX_RATES} items`);
  const rates = readStore.collection<TaxRateDoc>(TAX_RATES);
  const seen = new Set<string>();
  const terms: TaxRateTerms[] = [];
  for (const [i, id] of value.entries()) {
    const at = `${field}[${i}]`;
    if (typeof id !== 'string' || !isUuid(id)) throw new ValidationError(at, 'must be a tax rate id (a uuid)');
    if (seen.has(id)) throw new ValidationError(at, `tax rate ${id} is listed twice`);
    seen.add(id);
    const rate = await rates.get(id);
    if (!rate || rate.organizationId !== tenant.organizationId || rate.environment !== tenant.environment)
      throw new ValidationError(at, `tax rate ${id} does not exist`, 'resource_missing');
    if (!rate.isActive && !held.has(id))
      throw new ValidationError(
        at,
        `tax rate "${rate.name}" (${rate.percentage}%, ${id}) is not active: leave it out, or activate it again (PUT /api/v1/tax-rates/${id} with isActive true)`,
        'tax_rate_inactive',
      );
    terms.push({
      id: rate.id,
      name: rate.name,
      description: rate.description,
      country: rate.country,
      percentage: rate.percentage,
      type: rate.type,
      isDefault,
    });
  }
  return terms;
}
