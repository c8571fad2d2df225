import type { ReadStore } from '../read-store/read-store.ts';
import { taxLine, type TaxRateTerms } from '../shared/tax.ts';
import type { LineTax } from './line-items.ts';
import { resolveTaxRateIds } from './tax-rate.ts';

/**
 * The taxes of a session's or invoice's lines: each line takes its own `lineItems.data[i].taxRateIds`
 * when it has them, else the request's `taxRateIds` (marked `isDefault`). Null when neither names a
 * rate anywhere, so a request without tax rates is answered exactly as before they existed.
 * `heldDefaults` and a line's `heldTaxRateIds`: rates a draft already holds there, taken though inactive.
 */
export async function lineTaxes(
  readStore: ReadStore,
  tenant: { organizationId: string; environment: string },
  defaultIds: unknown,
  lines: { amount: bigint; taxRateIds?: unknown; taxRates?: TaxRateTerms[]; heldTaxRateIds?: ReadonlySet<string> }[],
  decimals: number,
  heldDefaults?: ReadonlySet<string>,
): Promise<LineTax[] | null> {
  const defaults = (await resolveTaxRateIds(readStore, tenant, defaultIds, 'taxRateIds', true, heldDefaults)) ?? [];
  const perLine: TaxRateTerms[][] = [];
  for (const [i, line] of lines.entries()) {
    const field = `lineItems.data[${i}].taxRateIds`;
    const own =
      line.taxRates ?? (await resolveTaxRateIds(readStore, tenant, line.taxRateIds, field, false, line.heldTaxRateIds));
    perLine.push(own ?? defaults);
  }
  if (perLine.every((rates) => rates.length === 0)) return null;
  return lines.map((line, i) => taxLine(line.amount, perLine[i]!, decimals));
}
