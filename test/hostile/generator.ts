import type { Clock } from '../../src/shared/clock.ts';
import type { Kind, TenantRecords, World } from './fixtures.ts';
import {
  CONTENT_TYPES,
  HOSTILE_IDS,
  HOSTILE_KEYS,
  HOSTILE_STRINGS,
  fieldValue,
  hostileValue,
  OTHER_METHODS,
  QUERY_KEYS,
  QUERY_VALUES,
  RAW_BODIES,
  RAW_NUMBER_LITERALS,
  UNKNOWN_METHODS,
} from './hostile-values.ts';
import type { Random } from './random.ts';
import type { RawRequest } from './raw-http.ts';
import { type Route, routeKey } from './route-table.ts';
import { TEMPLATES } from './templates.ts';

/** The kind of record a route's `:id` names, by the route's path. */
const ID_KINDS: [RegExp, Kind][] = [
  [/^\/api\/v1\/checkout\/sessions\/:id/, 'session'],
  [/^\/api\/v1\/organization\/withdrawal-addresses\/:id/, 'wallet'],
  [/^\/api\/v1\/payment-intents\/:id/, 'paymentIntent'],
  [/^\/api\/v1\/api-keys\/:id/, 'apiKey'],
  [/^\/api\/v1\/webhook-endpoints\/:id/, 'webhookEndpoint'],
  [/^\/api\/v1\/products\/:id/, 'product'],
  [/^\/api\/v1\/prices\/:id/, 'price'],
  [/^\/api\/v1\/customers\/:id/, 'customer'],
  [/^\/api\/v1\/coupons\/:id/, 'coupon'],
  [/^\/api\/v1\/tax-rates\/:id/, 'taxRate'],
  [/^\/api\/v1\/payment-links\/:id/, 'paymentLink'],
  [/^\/api\/v1\/invoices\/:id/, 'invoice'],
  [/^\/api\/v1\/subscriptions\/:id/, 'subscription'],
  [/^\/api\/v1\/chains\/:id/, 'chain'],
  [/^\/api\/v1\/assets\/:id/, 'asset'],
  [/^\/api\/v1\/users\/:id/, 'user'],
  [/^\/api\/v1\/invites\/:id/, 'invite'],
  [/^\/checkout\/:id/, 'session'],
  [/^\/invoices\/:id/, 'invoice'],
  [/^\/pay\/:id/, 'paymentLink'],
];

/** The kind of record a path template's `:id` names; undefined for a path without one or one the suite does not know. */
export function idKindOf(path: string): Kind | undefined {
  return ID_KINDS.find(([pattern]) => pattern.test(path))?.[1];
}

/** The kind a create route (POST to a collection) makes. */
const CREATES: Record<string, Kind> = {
  'POST /api/v1/checkout/sessions': 'session',
  'POST /api/v1/organization/withdrawal-addresses': 'wallet',
  'POST /api/v1/api-keys': 'apiKey',
  'POST /api/v1/webhook-endpoints': 'webhookEndpoint',
  'POST /api/v1/products': 'product',
  'POST /api/v1/prices': 'price',
  'POST /api/v1/customers': 'customer',
  'POST /api/v1/coupons': 'coupon',
  'POST /api/v1/tax-rates': 'taxRate',
  'POST /api/v1/payment-links': 'paymentLink',
  'POST /api/v1/invoices': 'invoice',
  'POST /api/v1/invoices/:id/duplicate': 'invoice',
  'POST /api/v1/invites': 'invite',
};

/** Paths no route has: the edges of each area, and what scanners try. */
const UNROUTED_PATHS = [
  '/',
  '/api',
  '/api/',
  '/api/v1',
  '/api/v1/',
  '/api/v2/customers',
  '/api/V1/customers',
  '/admin',
  '/admin/',
  '/admin/organizations/x',
  '/checkout',
  '/checkout/',
  '/pay/',
  '/invoices/',
  '/invoices/x',
  '/favicon.ico',
  '/.env',
  '/.git/config',
  '/api/v1/../../etc/passwd',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/health/',
  '/HEALTH',
  '//health',
  '/health/../admin/organizations',
  '*',
];

export const UNROUTED: Route = { area: 'none', method: '*', path: '(no route)' };

export type AuthChoice =
  | 'own'
  | 'otherEnv'
  | 'foreign'
  | 'foreignLive'
  | 'none'
  | 'malformed'
  | 'admin'
  | 'wrongAdmin'
  | 'apiKeyOnAdmin';
export type IdChoice = 'own' | 'otherEnv' | 'foreign' | 'wrongKind' | 'nonsense' | 'none';

/** A generated request, with what it was made of (for the report and for keeping the pools of real ids). */
export type HostileRequest = RawRequest & {
  index: number;
  route: Route;
  auth: AuthChoice;
  idChoice: IdChoice;
  /** The record `:id` names when it is one of the own tenant's. */
  ownId?: { kind: Kind; id: string };
  bodyShape: string;
};

/** Strings that make a body over 1 MiB on their own. */
const HUGE_STRINGS = [1024 * 1024, 1024 * 1024 + 1, 1536 * 1024, 2048 * 1024].map((n) => 'n'.repeat(n));
const HUGE_BYTES = [1024 * 1024 + 1, 1100 * 1024].map((n) => Buffer.alloc(n, 'x'));

/** JSON text of a value whose keys may include `__proto__` as an own property. */
const jsonOf = (value: unknown) => JSON.stringify(value) ?? 'null';

/** Set `key` as an own, enumerable property even when it is `__proto__`. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

type Container = Record<string, unknown> | unknown[];
type Slot = { parent: Container; key: string | number };

/** Where a value can be changed: every member and item down to a depth, and no more than a few hundred of them. */
const WALK_DEPTH = 6;
const WALK_LIMIT = 300;

function slots(value: unknown, into: Slot[] = [], depth = 0): Slot[] {
  if (depth > WALK_DEPTH || into.length > WALK_LIMIT || value === null || typeof value !== 'object') return into;
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.slice(0, WALK_LIMIT).map((item, i) => [i, item])
    : Object.entries(value).slice(0, WALK_LIMIT);
  for (const [key, item] of entries) {
    into.push({ parent: value as Container, key });
    slots(item, into, depth + 1);
  }
  return into;
}

/** The objects (not arrays) among `value` and its members, to the same depth. */
function containers(value: unknown, into: Record<string, unknown>[] = [], depth = 0): Record<string, unknown>[] {
  if (depth > WALK_DEPTH || into.length > WALK_LIMIT || value === null || typeof value !== 'object') return into;
  if (!Array.isArray(value)) into.push(value as Record<string, unknown>);
  const items = Array.isArray(value) ? value.slice(0, WALK_LIMIT) : Object.values(value).slice(0, WALK_LIMIT);
  for (const item of items) containers(item, into, depth + 1);
  return into;
}

const setSlot = (slot: Slot, value: unknown) => {
  if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = value;
  else setOwn(slot.parent, slot.key as string, value);
};

/** Encode what `encodeURIComponent` would, except what a hostile value already percent-encoded. */
const queryPart = (text: string) => (/%[0-9A-Fa-f]{2}/.test(text) ? text : encodeURIComponent(text));

/** A header value Node will write: Latin-1 only, no line breaks (a break would be refused before sending). */
const headerValue = (text: string) =>
  [...Buffer.from(text.replace(/[\r\n]/g, ''), 'utf8').toString('latin1')]
    .filter((c) => c === '\t' || (c >= ' ' && c !== '\u007f'))
    .join('');

export function requestGenerator(world: World, random: Random, clock: Clock) {
  const { own } = world;
  const tenants: Record<'own' | 'otherEnv' | 'foreign' | 'foreignLive', TenantRecords> = {
    own,
    otherEnv: world.otherEnv,
    foreign: world.foreign,
    foreignLive: world.foreignLive,
  };
  const anyId = (records: TenantRecords) => {
    const all = Object.values(records.ids).flat();
    return all.length ? random.pick(all) : crypto.randomUUID();
  };

  function authHeader(route: Route): { auth: AuthChoice; header?: string } {
    if (route.area === 'api') {
      const choice = random.weighted<AuthChoice>([
        [76, 'own'],
        [5, 'otherEnv'],
        [5, 'foreign'],
        [2, 'foreignLive'],
        [4, 'none'],
        [7, 'malformed'],
        [1, 'admin'],
      ]);
      if (choice === 'none') return { auth: choice };
      if (choice === 'admin') return { auth: choice, header: `Bearer ${world.adminToken}` };
      if (choice === 'malformed') {
        const key = own.key;
        return {
          auth: choice,
          header: random.pick([
            'Bearer',
            'Bearer ',
            key,
            `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
            `Bearer ${key} extra`,
            `Bearer ${key.slice(0, -1)}`,
            `Bearer sk_live_${key.slice(8)}`,
            `Bearer sk_prod_${key.slice(8)}`,
            `Bearer sk_test_${'A'.repeat(40)}`,
            `Bearer sk_test_${'A'.repeat(6000)}`,
            'Bearer sk_test_\u00ff\u00fe\u00e9',
            `Bearer ${key}\u00a0`,
            `Token ${key}`,
            'Bearer null',
            'Bearer undefined',
            `Bearer ${key},Bearer ${key}`,
          ]),
        };
      }
      return {
        auth: choice,
        header: `${random.chance(0.1) ? 'bearer' : 'Bearer'} ${tenants[choice as keyof typeof tenants].key}`,
      };
    }
    if (route.area === 'admin') {
      const choice = random.weighted<AuthChoice>([
        [60, 'admin'],
        [25, 'wrongAdmin'],
        [10, 'none'],
        [5, 'apiKeyOnAdmin'],
      ]);
      if (choice === 'admin') return { auth: choice, header: `Bearer ${world.adminToken}` };
      if (choice === 'apiKeyOnAdmin') return { auth: choice, header: `Bearer ${own.key}` };
      if (choice === 'none') return { auth: choice };
      return {
        auth: choice,
        header: random.pick([
          `Bearer ${world.adminToken}x`,
          `Bearer ${world.adminToken.slice(0, -1)}`,
          world.adminToken,
          `Basic ${world.adminToken}`,
          `Bearer ${'a'.repeat(5000)}`,
          'Bearer',
        ]),
      };
    }
    // Hosted pages and /health take no key; one sent anyway must change nothing.
    return random.chance(0.1) ? { auth: 'own', header: `Bearer ${own.key}` } : { auth: 'none' };
  }

  function chooseId(kind: Kind): { choice: IdChoice; segment: string; ownId?: { kind: Kind; id: string } } {
    const choice = random.weighted<IdChoice>([
      [62, 'own'],
      [6, 'otherEnv'],
      [6, 'foreign'],
      [6, 'wrongKind'],
      [20, 'nonsense'],
    ]);
    const from = (records: TenantRecords) => records.ids[kind];
    if (choice === 'own' && from(own).length) {
      const pool = from(own);
      // Mostly the newest: records made lately are the ones the run has not yet used up (deleted, canceled, paid).
      const id = random.chance(0.6) ? random.pick(pool.slice(-4)) : random.pick(pool);
      // The same id, dressed up: case, a trailing byte, a traversal after it.
      const dressed = random.weighted<string>([
        [90, id],
        [2, id.toUpperCase()],
        [2, `${id}%20`],
        [2, `${id}%0a`],
        [2, `${id}/..`],
        [2, `${id}x`],
      ]);
      return { choice, segment: dressed, ...(dressed === id ? { ownId: { kind, id } } : {}) };
    }
    if ((choice === 'otherEnv' || choice === 'foreign') && from(tenants[choice]).length)
      return { choice, segment: random.pick(from(tenants[choice])) };
    if (choice === 'wrongKind') return { choice, segment: anyId(own) };
    return {
      choice: 'nonsense',
      segment: random.chance(0.15) ? crypto.randomUUID() : random.pick(HOSTILE_IDS),
    };
  }

  function mutatePath(path: string): string {
    return random.pick<(p: string) => string>([
      (p) => `${p}/`,
      (p) => p.replace('/api/v1/', '/api//v1/'),
      (p) => `/${p}`,
      (p) => p.toUpperCase(),
      (p) => `${p}/..`,
      (p) => `${p}/../../admin/organizations`,
      (p) => `${p};jsessionid=1`,
      (p) => `${p}%20`,
      (p) => `${p}?`,
      (p) => `${p}#fragment`,
      (p) => p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
      (p) => p.replace('/v1/', '/v2/'),
      (p) => p.replace(/\//g, '\\'),
      (p) => `${p}/${random.pick(HOSTILE_IDS)}`,
    ])(path);
  }

  function query(): string {
    if (random.chance(0.01)) return `?q=${'a'.repeat(20_000)}`;
    const pairs: string[] = [];
    const count = 1 + random.int(4);
    for (let i = 0; i < count; i++) {
      const key = random.pick(QUERY_KEYS);
      const value = random.weighted<() => string>([
        [6, () => random.pick(QUERY_VALUES)],
        [2, () => anyId(own)],
        [1, () => anyId(world.foreign)],
        [1, () => `${anyId(own)},${anyId(world.foreign)}`],
      ])();
      pairs.push(random.chance(0.05) ? queryPart(key) : `${queryPart(key)}=${queryPart(value)}`);
    }
    return `?${pairs.join('&')}`;
  }

  /** One to three changes to a valid body: hostile values, missing and extra keys, other tenants' ids. */
  function mutate(body: unknown): unknown {
    const copy: unknown = body === undefined ? {} : JSON.parse(jsonOf(body));
    let root = copy;
    const changes = 1 + random.int(3);
    for (let i = 0; i < changes; i++) {
      // A copy each time: hostile values are shared constants, and a later change must not edit one.
      if (i > 0) root = JSON.parse(jsonOf(root));
      const all = slots(root);
      const objects = containers(root);
      const op = random.weighted<string>([
        [5, 'value'],
        [2, 'delete'],
        [2, 'key'],
        [1, 'retype'],
        [2, 'reference'],
        [0.3, 'root'],
      ]);
      if (op === 'root') {
        root = hostileValue(random);
        continue;
      }
      if (all.length === 0) {
        // An empty body or a bare value: give it one hostile member.
        const fresh: Record<string, unknown> = {};
        setOwn(fresh, random.pick(HOSTILE_KEYS), hostileValue(random));
        root = fresh;
        continue;
      }
      const slot = random.pick(all);
      const current = (slot.parent as Record<string | number, unknown>)[slot.key];
      if (op === 'value') {
        const key = String(slot.key);
        // Codes of the tenants' coupons (a real code of another tenant, or in another case) for `code` fields.
        const codes = key === 'code' ? [...own.codes, ...world.foreign.codes.map((c) => c.toLowerCase())] : [];
        const special = random.chance(0.5) ? fieldValue(key, random, codes) : undefined;
        setSlot(slot, special === undefined ? hostileValue(random) : special);
      } else if (op === 'delete') {
        if (Array.isArray(slot.parent)) slot.parent.splice(slot.key as number, 1);
        else delete slot.parent[slot.key as string];
      } else if (op === 'key' && objects.length) {
        setOwn(
          random.pick(objects),
          random.pick(HOSTILE_KEYS),
          random.chance(0.5) ? hostileValue(random) : JSON.parse(jsonOf(current)),
        );
      } else if (op === 'retype') {
        setSlot(
          slot,
          typeof current === 'string' && current !== '' && !Number.isNaN(Number(current))
            ? Number(current)
            : typeof current === 'number'
              ? String(current)
              : typeof current === 'boolean'
                ? String(current)
                : [current],
        );
      } else if (op === 'reference') {
        // An id that exists, but in another tenant or of another kind.
        setSlot(slot, random.chance(0.6) ? anyId(random.pick([world.foreign, world.otherEnv])) : anyId(own));
      }
    }
    return root;
  }

  /** The JSON text of `body` with one of its values swapped for a number literal JSON.stringify cannot write. */
  function withRawNumber(body: unknown): string {
    const text = jsonOf(body);
    const literal = random.pick(RAW_NUMBER_LITERALS);
    const values = [...text.matchAll(/:(\s*)("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*)/g)];
    if (values.length === 0) return `{"a": ${literal}}`;
    const chosen = random.pick(values);
    const start = chosen.index! + 1 + chosen[1]!.length;
    return text.slice(0, start) + literal + text.slice(start + chosen[2]!.length);
  }

  const formText = (fields: Record<string, unknown>) =>
    new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])).toString();

  function body(route: Route, template: unknown): { bytes?: Buffer; type?: string; shape: string } {
    const json = (value: unknown, shape: string) => ({
      bytes: Buffer.from(jsonOf(value)),
      type: 'application/json',
      shape,
    });
    // The routes that read a form (the payment link's, the checkout page's asset buttons) are sent forms mostly.
    if ((route.path === '/pay/:id' || route.path === '/checkout/:id') && route.method === 'POST') {
      const form = (template ?? {}) as Record<string, unknown>;
      return random.weighted<() => { bytes?: Buffer; type?: string; shape: string }>([
        [20, () => ({ bytes: Buffer.from(formText(form)), type: 'application/x-www-form-urlencoded', shape: 'form' })],
        [
          45,
          () => {
            const changed = { ...form };
            for (let i = 0; i < 1 + random.int(4); i++) {
              const key = random.chance(0.8) ? random.pick(Object.keys(form)) : random.pick(HOSTILE_KEYS);
              if (random.chance(0.2)) delete changed[key];
              else changed[key] = random.pick(HOSTILE_STRINGS);
            }
            return {
              bytes: Buffer.from(formText(changed)),
              type: 'application/x-www-form-urlencoded',
              shape: 'form with hostile fields',
            };
          },
        ],
        [
          5,
          () => ({
            bytes: Buffer.from(`amount=1&name=${'x'.repeat(70_000)}`),
            type: 'application/x-www-form-urlencoded',
            shape: 'form over 64 KiB',
          }),
        ],
        [
          5,
          () => ({
            bytes: Buffer.from('amount=%zz&%%%=&=&&==&amount'),
            type: 'application/x-www-form-urlencoded',
            shape: 'broken form',
          }),
        ],
        [10, () => json(form, 'JSON instead of a form')],
        [5, () => ({ shape: 'no body' })],
        [
          10,
          () => ({
            bytes: Buffer.from(formText(form)),
            type: random.pick(CONTENT_TYPES),
            shape: 'form with another type',
          }),
        ],
      ])();
    }
    const payer = route.area === 'checkout';
    return random.weighted<() => { bytes?: Buffer; type?: string; shape: string }>([
      // A payer's requests are valid more often: what they start (a discount, a payment method) is what the later ones meet.
      [payer ? 40 : 14, () => (template === undefined ? { shape: 'no body' } : json(template, 'valid'))],
      [payer ? 30 : 50, () => json(mutate(template), 'mutated')],
      [8, () => ({ bytes: Buffer.from(random.pick(RAW_BODIES)), type: 'application/json', shape: 'not JSON' })],
      [6, () => json(hostileValue(random), 'another type')],
      [6, () => ({ shape: 'no body' })],
      [3, () => ({ bytes: Buffer.from(withRawNumber(template ?? {})), type: 'application/json', shape: 'raw number' })],
      [
        2,
        () =>
          json(
            {
              ...(typeof template === 'object' && template ? template : {}),
              name: random.pick(HUGE_STRINGS),
            },
            'over 1 MiB',
          ),
      ],
      [
        1,
        () => ({
          bytes: random.pick(HUGE_BYTES),
          type: 'application/json',
          shape: 'over 1 MiB, not JSON',
        }),
      ],
      [
        3,
        () => ({
          bytes: Buffer.from(jsonOf(template ?? {})),
          type: 'application/x-www-form-urlencoded',
          shape: 'JSON sent as a form',
        }),
      ],
    ])();
  }

  let index = 0;
  let previous: HostileRequest | undefined;

  /** The next request: now and then the previous one again, as a client that retries does (above all one with an Idempotency-Key). */
  function next(route: Route): HostileRequest {
    const again = previous && random.chance(previous.headers['idempotency-key'] !== undefined ? 0.3 : 0.02);
    index += 1;
    previous =
      again && previous ? { ...previous, index, bodyShape: `${previous.bodyShape}, sent again` } : fresh(route);
    return previous;
  }

  /** A new request aimed at `route` (or at no route, for `UNROUTED`). */
  function fresh(route: Route): HostileRequest {
    const key = routeKey(route);
    const template = TEMPLATES[key]?.(own, random, clock);
    const { auth, header } = authHeader(route);
    let idChoice: IdChoice = 'none';
    let ownId: HostileRequest['ownId'];
    let path: string;
    if (route === UNROUTED) path = random.pick(UNROUTED_PATHS);
    else {
      path = route.path;
      const kind = idKindOf(route.path);
      if (path.includes(':id')) {
        const chosen = kind ? chooseId(kind) : { choice: 'nonsense' as const, segment: random.pick(HOSTILE_IDS) };
        idChoice = chosen.choice;
        ownId = 'ownId' in chosen ? chosen.ownId : undefined;
        path = path.replace(':id', chosen.segment);
      }
      // Any other parameter (a file name, a code) gets what an id would.
      path = path.replace(/:[A-Za-z_]\w*/g, () => random.pick(HOSTILE_IDS));
      if (random.chance(0.06)) {
        path = mutatePath(path);
        ownId = undefined;
      }
    }
    if (random.chance(0.35)) path += query();

    const method = random.weighted<() => string>([
      [84, () => (route === UNROUTED ? random.pick(OTHER_METHODS) : route.method)],
      [9, () => random.pick(OTHER_METHODS)],
      [7, () => random.pick(UNKNOWN_METHODS)],
    ])();
    const takesBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
    const made = takesBody || random.chance(0.08) ? body(route, template) : { shape: 'no body' };

    const headers: Record<string, string> = {};
    if (header !== undefined) headers.authorization = headerValue(header);
    if (made.bytes)
      headers['content-type'] = random.chance(0.9) ? (made.type ?? 'application/json') : random.pick(CONTENT_TYPES);
    if (random.chance(0.08))
      headers['idempotency-key'] = headerValue(
        random.pick([
          crypto.randomUUID(),
          'hostile-key-1',
          'hostile-key-2',
          '',
          'k'.repeat(255),
          'k'.repeat(256),
          'k'.repeat(7000),
          '\u00ff\u00fe',
          '💸',
        ]),
      );
    if (random.chance(0.04))
      headers['x-request-id'] = headerValue(random.pick([...HOSTILE_STRINGS.slice(0, 30), 'r'.repeat(8000)]));
    if (random.chance(0.03))
      headers.accept = random.pick(['text/html', '*/*', 'application/xml', 'application/json;q=0']);
    if (random.chance(0.02)) headers['content-encoding'] = random.pick(['gzip', 'br', 'identity, gzip']);
    if (random.chance(0.02)) headers['x-forwarded-for'] = random.pick(['1.2.3.4, 5.6.7.8', 'garbage', '::1', '']);
    if (random.chance(0.01)) headers.host = random.pick(['evil.example', '', 'localhost:1']);
    if (random.chance(0.01)) headers.expect = random.pick(['100-continue', 'hostile']);
    const oversized = (made.bytes?.length ?? 0) > 64 * 1024;
    const chunked = made.bytes !== undefined && takesBody && random.chance(0.05);
    // A request the server may refuse before reading it, or whose unread bytes could spoil the connection, goes alone.
    const ownConnection =
      oversized ||
      UNKNOWN_METHODS.includes(method) ||
      path.length > 8000 ||
      'host' in headers ||
      'expect' in headers ||
      (headers.authorization?.length ?? 0) > 4000 ||
      (headers['idempotency-key']?.length ?? 0) > 4000 ||
      (headers['x-request-id']?.length ?? 0) > 4000;
    return {
      index,
      route,
      auth,
      idChoice,
      ...(ownId ? { ownId } : {}),
      bodyShape: made.shape,
      method,
      path,
      headers,
      ...(made.bytes ? { body: made.bytes } : {}),
      chunked,
      ownConnection,
    };
  }

  return { next, creates: (route: Route) => CREATES[routeKey(route)] };
}
