import { shownHashOn } from '../../../chain-ingest/tron/networks.ts';
import { documentAmount } from '../../../shared/money.ts';

/**
 * What an event changed, as rows a person reads: its data flattened to dotted paths (`customer.name`),
 * credentials hidden, long values cut, and for an update (`data.changes`) each field's value before
 * it beside the new one, the before taken from the record's earlier events in the log.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** `raw`: the value as the log holds it, when `after` writes it otherwise (an amount with its currency). */
export type ChangeRow = { path: string; after: string; before?: string; raw?: string };
export type EventLike = { type: string; data: Record<string, unknown> };

export const HIDDEN = '•••• hidden';
const MAX_TEXT = 120;

/**
 * Credentials and their hashes, at any depth: the log's redaction list (src/shared/logger.ts) less its
 * personal fields (a merchant's own customers' emails are theirs to see), plus the hashes and sealed
 * secrets the log keeps. Chain hashes (`transactionHash`, `blockHash`) are public and shown.
 */
const SECRET_FIELD =
  /^(authorization|cookie|apiKey|secretKey|secret|webhookSecret|masterKey|adminToken|sweeperKey|privateKey|password|passwordHash|secretHash|previousSecretHash|tokenHash|sealedSecret|signedTransaction|totpSecret|recoveryCodes?|recoveryCodeHashes|token)$/i;

export const isSecretField = (name: string): boolean => SECRET_FIELD.test(name) || /secret|password/i.test(name);

/** One value as text: strings as they are (cut past 120 characters), null as an em dash. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string')
    return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}… (${value.length} characters)` : value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'none' : JSON.stringify(value);
  return Object.keys(value).length === 0 ? 'none' : JSON.stringify(value);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The fields that hold a transaction or block hash (`seenIn[].hash`: a block a transfer was seen in). */
const CHAIN_HASH_FIELD = /^(transactionHash|blockHash|hash)$/;

/**
 * The chain of each hash the events name beside a `chainId` (a payment, a sweep, a paid invoice), so a
 * hash an event names without one (`CheckoutSessionCompleted.transactionHash`) is shown as its chain does.
 */
export function chainsOfHashes(events: readonly EventLike[]): Map<string, number> {
  const chains = new Map<string, number>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) for (const v of value) walk(v);
    if (!isPlainObject(value)) return;
    for (const [k, v] of Object.entries(value)) {
      if (typeof value.chainId === 'number' && typeof v === 'string' && CHAIN_HASH_FIELD.test(k))
        chains.set(v, value.chainId);
      walk(v);
    }
  };
  for (const event of events) walk(event.data);
  return chains;
}

/**
 * `data` as `path → text` pairs, depth first in key order; secrets as "hidden", uploaded bytes by their
 * size; a chain hash as its network's tools show it (a Tron txID or block id bare, the log keeping
 * `0x…`), by the `chainId` beside it or, else, the chain `chains` knows it on.
 */
export function flatten(
  data: unknown,
  prefix = '',
  chains: ReadonlyMap<string, number> = new Map(),
): [string, string][] {
  const rows: [string, string][] = [];
  const walk = (value: unknown, path: string, key: string, chainId: number | undefined) => {
    if (key && isSecretField(key)) {
      rows.push([path, HIDDEN]);
      return;
    }
    if (key === 'base64' && typeof value === 'string') {
      rows.push([path, `(${Math.floor((value.length * 3) / 4)} bytes of a file)`]);
      return;
    }
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      const chain = typeof value.chainId === 'number' ? value.chainId : chainId;
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k, k, chain);
      return;
    }
    if (Array.isArray(value) && value.some((v) => typeof v === 'object' && v !== null)) {
      value.forEach((v, i) => {
        walk(v, `${path}[${i}]`, '', chainId);
      });
      return;
    }
    const chain = typeof value === 'string' && CHAIN_HASH_FIELD.test(key) ? (chainId ?? chains.get(value)) : undefined;
    rows.push([
      path,
      chain !== undefined
        ? formatValue(shownHashOn(chain, value as string))
        : Array.isArray(value)
          ? value.length
            ? value.map(formatValue).join(', ')
            : 'none'
          : formatValue(value),
    ]);
  };
  walk(data, prefix, '', undefined);
  return rows;
}

const TENANT_FIELDS = new Set(['organizationId', 'environment']);

/** The record snapshot an event carries (`{session: {...}}`, `{customer: {...}}`): its single object field. */
function snapshotOf(data: Record<string, unknown>): Record<string, unknown> | null {
  const objects = Object.values(data).filter(isPlainObject);
  return objects.length === 1 && Object.keys(data).length <= 3 ? objects[0]! : null;
}

/** The record's fields as its earlier events left them: a creation's snapshot, then each update's changes. */
export function knownFields(earlier: readonly EventLike[]): Map<string, string> {
  const known = new Map<string, string>();
  for (const event of earlier) {
    const changes = event.data.changes;
    const source = isPlainObject(changes) ? changes : event.type.endsWith('Created') ? snapshotOf(event.data) : null;
    if (!source) continue;
    // A field given whole replaces what was under it (metadata, an address).
    for (const key of Object.keys(source))
      for (const path of [...known.keys()])
        if (path === key || path.startsWith(`${key}.`) || path.startsWith(`${key}[`)) known.delete(path);
    for (const [path, text] of flatten(source)) known.set(path, text);
  }
  return known;
}

/**
 * An item of a record updated whole (a wallet of an organization: `{id, name, address}`, no
 * `changes`): its fields as the events about the same `id` before it left them.
 */
export function knownItemFields(id: string, earlier: readonly EventLike[]): Map<string, string> {
  const known = new Map<string, string>();
  for (const event of earlier) {
    if (event.data.id !== id) continue;
    const { at: _at, ...data } = event.data;
    for (const [path, text] of flatten(data)) known.set(path, text);
  }
  return known;
}

/** How an amount is written: its decimals (10^8 for Weir's own scale) and its currency or symbol. */
export type Scale = { decimals: number; unit: string };
const WEIR_DECIMALS = 8;

/** Each chain's native coin by chain id: a sweep's gas is paid in it, in its smallest unit (wei, sun, lamports). */
export type NativeCoins = ReadonlyMap<number, Scale>;

/** A field that holds an amount on Weir's 10^8 scale (`amountRaw`, in chain units, is told apart by its asset). */
const AMOUNT_FIELD = /^(amount|[a-z]\w*Amount)([A-Z]\w*)?$/;
/** A sweep's gas and, on Tron, the TRX burnt and renting energy cost: in the native coin's smallest unit. */
const GAS_FIELD = /^(gasCost|trxBurnt|rentalCost)$/;
/** A payment link's suggested amounts: a list on Weir's 10^8 scale. */
const AMOUNT_LIST_FIELD = 'suggestedAmounts';
const INTEGER = /^-?\d+$/;

/** The asset's scale from an `AssetRef`-like object. */
const assetScale = (asset: unknown): Scale | null =>
  isPlainObject(asset) && typeof asset.decimals === 'number' && typeof asset.symbol === 'string'
    ? { decimals: asset.decimals, unit: asset.symbol }
    : null;

/**
 * The assets the events name as objects (a session's addresses, a payment's asset), by id: a sweep's
 * `moved` names its asset by id alone, so its `amountRaw` takes its scale from them.
 */
function assetScalesById(events: readonly EventLike[]): Map<string, Scale> {
  const byId = new Map<string, Scale>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) for (const v of value) walk(v);
    if (!isPlainObject(value)) return;
    const scale = assetScale(value);
    if (scale && typeof value.id === 'string') byId.set(value.id, scale);
    for (const v of Object.values(value)) walk(v);
  };
  for (const event of events) walk(event.data);
  return byId;
}

/** The creation events whose snapshot names a record's currency, by the snapshot's field. */
const CREATIONS: Record<string, string> = {
  CheckoutSessionCreated: 'session',
  InvoiceCreated: 'invoice',
  SubscriptionCreated: 'subscription',
  PaymentLinkCreated: 'link',
};

/** The currency of the record the events are of, as its creation named it (null: no creation in sight). */
const recordCurrency = (events: readonly EventLike[]): string | null => {
  for (const event of events) {
    const field = CREATIONS[event.type];
    const snapshot = field === undefined ? undefined : event.data[field];
    if (isPlainObject(snapshot) && typeof snapshot.currency === 'string') return snapshot.currency.toUpperCase();
  }
  return null;
};

/**
 * The amounts an event holds, by path as `flatten` names them, each with its scale: a checkout
 * session's, an invoice's, a subscription's or a payment link's amounts on Weir's 10^8 scale in its
 * currency (or the `currency` beside them: a line, a price); a transfer's `amountRaw` in its asset's
 * units (or, a sweep's `moved`, in those of the asset its id names); `PaymentMethodSelected.amountDue` in the chosen asset's units (machines/checkout-session.types.ts);
 * a sweep's gas in its chain's native coin (`natives`). An amount whose scale is not known is left out.
 */
export function amountScales(
  event: EventLike,
  earlier: readonly EventLike[],
  shown: unknown,
  natives: NativeCoins = new Map(),
): Map<string, Scale> {
  const scales = new Map<string, Scale>();
  const recordUnit = recordCurrency([...earlier, event]);
  const assets = assetScalesById([...earlier, event]);
  const creation = [...earlier, event].find((e) => e.type === 'CheckoutSessionCreated')?.data.session;
  if (event.type === 'PaymentMethodSelected' && isPlainObject(creation) && Array.isArray(creation.addresses)) {
    const chosen = creation.addresses.find((a) => isPlainObject(a) && a.id === event.data.addressId);
    const scale = isPlainObject(chosen) ? assetScale(chosen.asset) : null;
    if (scale) scales.set('amountDue', scale);
  }
  const walk = (value: unknown, path: string, unit: string | null, native: Scale | undefined): void => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(v, `${path}[${i}]`, unit, native);
      });
      return;
    }
    if (!isPlainObject(value)) return;
    const here = typeof value.currency === 'string' ? value.currency.toUpperCase() : unit;
    const coin = typeof value.chainId === 'number' ? natives.get(value.chainId) : native;
    const asset = assetScale(value.asset) ?? (typeof value.asset === 'string' ? assets.get(value.asset) : undefined);
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (typeof v === 'string' && INTEGER.test(v) && !scales.has(at)) {
        // Chain units, never Weir's 10^8: without its asset it is shown as the log holds it.
        if (k === 'amountRaw') {
          if (asset) scales.set(at, asset);
        } else if (GAS_FIELD.test(k)) {
          if (coin) scales.set(at, coin);
        } else if (AMOUNT_FIELD.test(k) && here !== null) scales.set(at, { decimals: WEIR_DECIMALS, unit: here });
      } else if (
        k === AMOUNT_LIST_FIELD &&
        here !== null &&
        Array.isArray(v) &&
        v.every((x) => INTEGER.test(String(x)))
      )
        scales.set(at, { decimals: WEIR_DECIMALS, unit: here });
      else walk(v, at, here, coin);
    }
  };
  walk(shown, '', recordUnit, undefined);
  return scales;
}

/** Integers (one, or a list as `flatten` joins it) written on `scale`. */
const scaled = (text: string, scale: Scale): string =>
  text
    .split(', ')
    .map((n) => `${documentAmount(BigInt(n), '−', scale.decimals)} ${scale.unit}`)
    .join(', ');

/** An amount's row written with its currency, the log's integer kept as `raw` (a value before it written the same way). */
const withScale = (row: ChangeRow, scale: Scale | undefined): ChangeRow => {
  if (!scale || !/^-?\d+(, -?\d+)*$/.test(row.after)) return row;
  const before =
    row.before !== undefined && /^-?\d+(, -?\d+)*$/.test(row.before) ? { before: scaled(row.before, scale) } : {};
  return { ...row, ...before, after: scaled(row.after, scale), raw: row.after };
};

/**
 * The rows of one event: for an update, each changed field with its value before (when the log
 * knew it); the event's other fields after them; `at` (the event's own time) left out.
 */
export function changeRows(
  event: EventLike,
  earlier: readonly EventLike[] = [],
  /** Events of other records that name the chain of this one's hashes (the checkout session that paid an invoice). */
  related: readonly EventLike[] = [],
  /** Each chain's native coin: a sweep's gas written in it. */
  natives: NativeCoins = new Map(),
): ChangeRow[] {
  const { changes, at: _at, ...rest } = event.data;
  const chains = chainsOfHashes([...related, ...earlier]);
  const rows: ChangeRow[] = [];
  if (isPlainObject(changes)) {
    const known = knownFields(earlier);
    const changed = amountScales(event, earlier, changes, natives);
    for (const [path, after] of flatten(changes)) {
      const before = known.get(path);
      rows.push(withScale(before === undefined ? { path, after } : { path, before, after }, changed.get(path)));
    }
  } else if (changes !== undefined) rows.push({ path: 'changes', after: formatValue(changes) });
  // A creation's snapshot (`{customer: {...}}`) is shown as the record's own fields, less its tenant.
  const snapshot = changes === undefined ? snapshotOf(rest) : null;
  // An item updated whole: a field that differs from the item's earlier events shows its value before.
  const item =
    changes === undefined && event.type.endsWith('Updated') && typeof rest.id === 'string'
      ? knownItemFields(rest.id, earlier)
      : null;
  const scales = amountScales(event, earlier, snapshot ?? rest, natives);
  for (const [path, after] of flatten(snapshot ?? rest, '', chains)) {
    if (!path || (snapshot && TENANT_FIELDS.has(path))) continue;
    const before = item?.get(path);
    const row = before !== undefined && before !== after ? { path, before, after } : { path, after };
    rows.push(withScale(row, scales.get(path)));
  }
  return rows;
}

/** `CheckoutSessionCanceled` → `Checkout session canceled`. */
export const describeType = (type: string): string => {
  const words = type.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return (words.charAt(0).toUpperCase() + words.slice(1)).replace(/\b[Aa]pi\b/g, 'API');
};

/** `checkout_session` → `Checkout session`. */
export const describeRecordType = (recordType: string): string =>
  describeType(recordType.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase()));
