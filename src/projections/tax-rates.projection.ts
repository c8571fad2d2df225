import { evolveTaxRate, TAX_RATES, type TaxRateDoc, type TaxRateEvent } from '../actors/tax-rate.ts';
import type { Projection } from './projection.ts';

const PREFIX = 'tax_rate-';

/** Tax rates, one document each (the `evolveTaxRate` result). */
export const taxRatesProjection: Projection = {
  name: 'tax_rates',
  collections: [TAX_RATES],
  categories: ['tax_rate'],
  async apply(event, store) {
    if (!event.streamId.startsWith(PREFIX)) return;
    const rates = store.collection<TaxRateDoc>(TAX_RATES);
    const id = event.streamId.slice(PREFIX.length);
    const next = evolveTaxRate(await rates.get(id), event as unknown as TaxRateEvent);
    if (next) await rates.put({ ...next, _id: id });
  },
};
