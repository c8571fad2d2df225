import TinyQueue from 'tinyqueue';

/** How many deliveries may be in flight at once: in all, per tenant, per endpoint. */
export type FairQueueLimits = { total: number; perTenant: number; perEndpoint: number };

/** Something to send to one endpoint of one tenant, due at `dueAt` (ms). */
export type FairQueueItem = { id: string; tenant: string; endpoint: string; dueAt: number };

type Entry = { id: string; dueAt: number; version: number };
type EndpointLane = { key: string; tenant: TenantLane; heap: TinyQueue<Entry>; running: number };
type TenantLane = { key: string; endpoints: Map<string, EndpointLane>; running: number };

export type FairQueue<T extends FairQueueItem> = {
  /** Queue `item`, or move it to its new due time; ignored while it is in flight. */
  add(item: T): void;
  /** Forget a queued item. */
  remove(id: string): void;
  /** The queued or in-flight item with this id. */
  get(id: string): T | undefined;
  isInFlight(id: string): boolean;
  /** Make the queued items of an endpoint (those `which` picks) due at `now`: their endpoint went away, each ends at once. */
  dueNow(endpoint: string, now: number, which?: (item: T) => boolean): void;
  /**
   * Items due by `now` that may start within the limits, each counted in flight until `finish`.
   * Tenants take turns, one item each per round, and within a tenant its endpoints take turns, so a
   * tenant or an endpoint with a long backlog or slow answers never holds back the others.
   */
  take(now: number): T[];
  finish(id: string): void;
  /** When the next queued item that may start falls due (null: none; blocked ones wait for a `finish`). */
  nextDueAt(): number | null;
  size(): { queued: number; inFlight: number };
};

export function createFairQueue<T extends FairQueueItem>(limits: FairQueueLimits): FairQueue<T> {
  const queued = new Map<string, { item: T; version: number }>();
  const inFlight = new Map<string, T>();
  // Map order is the turn order: a lane that was just served moves to the end.
  const tenants = new Map<string, TenantLane>();
  let running = 0;
  let versions = 0;

  const byDue = (a: Entry, b: Entry) => a.dueAt - b.dueAt || a.version - b.version;

  function laneOf(item: T): EndpointLane {
    let tenant = tenants.get(item.tenant);
    if (!tenant) {
      tenant = { key: item.tenant, endpoints: new Map(), running: 0 };
      tenants.set(item.tenant, tenant);
    }
    let lane = tenant.endpoints.get(item.endpoint);
    if (!lane) {
      lane = { key: item.endpoint, tenant, heap: new TinyQueue<Entry>([], byDue), running: 0 };
      tenant.endpoints.set(item.endpoint, lane);
    }
    return lane;
  }

  function findLane(tenantKey: string, endpointKey: string): EndpointLane | undefined {
    return tenants.get(tenantKey)?.endpoints.get(endpointKey);
  }

  /** The lane's earliest entry still current (removed and moved items leave stale entries behind). */
  function head(lane: EndpointLane): Entry | undefined {
    for (;;) {
      const top = lane.heap.peek();
      if (!top || queued.get(top.id)?.version === top.version) return top;
      lane.heap.pop();
    }
  }

  /** Drops lanes with nothing queued and nothing running. */
  function prune(lane: EndpointLane): void {
    if (lane.running > 0 || head(lane)) return;
    const { tenant } = lane;
    tenant.endpoints.delete(lane.key);
    if (tenant.endpoints.size === 0 && tenant.running === 0) tenants.delete(tenant.key);
  }

  function takeFrom(tenant: TenantLane, now: number): T | null {
    // The lane served moves to the end of the turn order, and the loop ends right there.
    for (const lane of tenant.endpoints.values()) {
      if (lane.running >= limits.perEndpoint) continue;
      const top = head(lane);
      if (!top || top.dueAt > now) continue;
      lane.heap.pop();
      const { item } = queued.get(top.id)!;
      queued.delete(top.id);
      inFlight.set(item.id, item);
      lane.running += 1;
      tenant.running += 1;
      running += 1;
      tenant.endpoints.delete(lane.key);
      tenant.endpoints.set(lane.key, lane);
      return item;
    }
    return null;
  }

  function add(item: T): void {
    if (inFlight.has(item.id)) return;
    const before = queued.get(item.id)?.item;
    const version = ++versions;
    queued.set(item.id, { item, version });
    laneOf(item).heap.push({ id: item.id, dueAt: item.dueAt, version });
    // An item that changed endpoint leaves its old lane's entry stale.
    if (before && (before.endpoint !== item.endpoint || before.tenant !== item.tenant)) {
      const old = findLane(before.tenant, before.endpoint);
      if (old) prune(old);
    }
  }

  return {
    add,
    remove(id) {
      const entry = queued.get(id);
      if (!entry) return;
      queued.delete(id);
      const lane = findLane(entry.item.tenant, entry.item.endpoint);
      if (lane) prune(lane);
    },
    get: (id) => queued.get(id)?.item ?? inFlight.get(id),
    isInFlight: (id) => inFlight.has(id),
    dueNow(endpoint, now, which = () => true) {
      for (const { item } of [...queued.values()]) {
        if (item.endpoint === endpoint && item.dueAt > now && which(item)) add({ ...item, dueAt: now });
      }
    },
    take(now) {
      const started: T[] = [];
      for (;;) {
        let progress = false;
        for (const tenant of [...tenants.values()]) {
          if (running >= limits.total) return started;
          if (tenant.running >= limits.perTenant) continue;
          const item = takeFrom(tenant, now);
          if (!item) continue;
          started.push(item);
          progress = true;
          tenants.delete(tenant.key);
          tenants.set(tenant.key, tenant);
        }
        if (!progress) return started;
      }
    },
    finish(id) {
      const item = inFlight.get(id);
      if (!item) return;
      inFlight.delete(id);
      running -= 1;
      const lane = findLane(item.tenant, item.endpoint);
      if (!lane) return;
      lane.running -= 1;
      lane.tenant.running -= 1;
      prune(lane);
    },
    nextDueAt() {
      if (running >= limits.total) return null;
      let next: number | null = null;
      for (const tenant of tenants.values()) {
        if (tenant.running >= limits.perTenant) continue;
        for (const lane of tenant.endpoints.values()) {
          if (lane.running >= limits.perEndpoint) continue;
          const top = head(lane);
          if (top && (next === null || top.dueAt < next)) next = top.dueAt;
        }
      }
      return next;
    },
    size: () => ({ queued: queued.size, inFlight: inFlight.size }),
  };
}
