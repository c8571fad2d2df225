/**
 * A large log, fast: a realistic seed log written through the real write side
 * (realistic-log.ts: about 20,000 events take minutes on a busy host, so 1,000,000 that way would
 * take hours), then its closed checkout sessions copied under new ids until the target is reached,
 * each copy with the webhook deliveries (and their attempts) its events gave rise to, inserted
 * straight into the SQLite event store file in batched transactions, each event linked into the
 * hash chain (event-chain.ts) as an append would link it.
 *
 * A copy is its seed session with new ids wherever the session's own ids appear (session, event,
 * deposit address and payment intent ids, payment addresses, transaction and block hashes, public
 * event and delivery ids, derived as the projections derive them): the projections see a million
 * distinct sessions of the seed's merchants, products and fates. Sessions still open at the end of
 * the seed are not copied (their expiries would fire at every start).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { linkAfter, tenantOfContent } from '../../src/event-store/event-chain.ts';
import type { EventMetadata, RecordedEvent } from '../../src/event-store/event-store.ts';
import type { JsonObject } from '../../src/shared/json.ts';
import { createSqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { deliveryIdOf } from '../../src/projections/webhooks.projection.ts';
import { publicEventKindsOf, publicEventOf } from '../../src/webhooks/webhook-events.ts';
import { writeRealisticLog } from './realistic-log.ts';

type Row = { id: string; stream_id: string; revision: number; type: string; data: string; metadata: string };

const CLOSED = new Set(['CheckoutSessionCompleted', 'CheckoutSessionExpired', 'CheckoutSessionCanceled']);
const HASH = /0x[0-9a-f]{64}/g;
const INSERT_BATCH = 20_000;

export async function writeReplicatedLog(options: {
  path: string;
  targetEvents: number;
  /** Events of the seed written through the real write side (default 20,000). */
  seedEvents?: number;
  /** A seed log kept here is copied instead of written again (and one written is kept here). */
  seedFile?: string;
  onProgress?: (events: number) => void;
}): Promise<{ events: number; copies: number }> {
  if (options.seedFile && existsSync(options.seedFile)) {
    await copyFile(options.seedFile, options.path);
  } else {
    const seedStore = createSqliteEventStore({ path: options.path });
    await writeRealisticLog({ eventStore: seedStore, targetEvents: options.seedEvents ?? 20_000 });
    await seedStore.close();
    if (options.seedFile) await copyFile(options.path, options.seedFile);
  }

  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  try {
    const rows = db
      .prepare<[], Row>('SELECT id, stream_id, revision, type, data, metadata FROM events ORDER BY position')
      .all();
    const streams = new Map<string, Row[]>();
    for (const row of rows) {
      let events = streams.get(row.stream_id);
      if (!events) {
        events = [];
        streams.set(row.stream_id, events);
      }
      events.push(row);
    }
    const endpoints = rows
      .filter((row) => row.type === 'WebhookEndpointCreated')
      .map((row) => (JSON.parse(row.data) as { endpoint: { id: string } }).endpoint.id);
    const asRecorded = (row: Row, id = row.id): RecordedEvent => ({
      id,
      streamId: row.stream_id,
      revision: row.revision,
      type: row.type,
      data: JSON.parse(row.data) as JsonObject,
      metadata: JSON.parse(row.metadata) as EventMetadata,
      position: 0n,
    });
    // Each closed session, with the delivery streams of its events (found as the projection names them).
    const templates = [...streams]
      .filter(([stream, events]) => stream.startsWith('checkout_session-') && events.some((e) => CLOSED.has(e.type)))
      .map(([stream, events]) => {
        const deliveries: {
          stream: Row[];
          sourceIndex: number;
          kind: { type: string; object: string };
          endpoint: string;
          oldPublic: string;
        }[] = [];
        events.forEach((event, sourceIndex) => {
          for (const kind of publicEventKindsOf(asRecorded(event))) {
            const publicId = publicEventOf(asRecorded(event), kind).id;
            for (const endpoint of endpoints) {
              const delivery = streams.get(`webhook_delivery-${deliveryIdOf(publicId, endpoint)}`);
              if (delivery) deliveries.push({ stream: delivery, sourceIndex, kind, endpoint, oldPublic: publicId });
            }
          }
        });
        // The event as a public event's id is derived from, under another event id.
        const recorded = events.map((event) => {
          const parsed = asRecorded(event);
          return (id: string): RecordedEvent => ({ ...parsed, id });
        });
        const hashes = [...new Set(events.flatMap((event) => event.data.match(HASH) ?? []))];
        const created = JSON.parse(events[0]!.data) as {
          session: { id: string; addresses: { id: string; paymentAddress: string }[]; paymentIntent: { id: string } };
        };
        const ids = [
          created.session.id,
          created.session.paymentIntent.id,
          ...created.session.addresses.flatMap((a) => [a.id, a.paymentAddress]),
        ];
        return { stream, events, deliveries, ids, recorded, hashes, pattern: null as RegExp | null };
      });

    const insert = db.prepare(
      'INSERT INTO events (id, stream_id, revision, type, data, metadata, previous_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    let previous = (db.prepare('SELECT hash FROM events ORDER BY position DESC LIMIT 1').pluck().get() as string) ?? '';
    let total = rows.length;
    let copies = 0;
    let pending: [string, string, number, string, string, string][] = [];
    const flush = db.transaction((batch: typeof pending) => {
      for (const [id, stream, revision, type, data, metadata] of batch) {
        const content = { id, streamId: stream, revision, type, data, metadata };
        const link = linkAfter(previous, content, tenantOfContent(content));
        insert.run(id, stream, revision, type, data, metadata, link.previous, link.hash);
        previous = link.hash;
      }
    });
    const push = (row: [string, string, number, string, string, string]) => {
      pending.push(row);
      total += 1;
      if (pending.length >= INSERT_BATCH) {
        flush(pending);
        pending = [];
        options.onProgress?.(total);
      }
    };
    while (total < options.targetEvents && templates.length > 0) {
      for (const template of templates) {
        if (total >= options.targetEvents) break;
        copies += 1;
        // The old strings are the template's (one pattern each, made once); the new ones this copy's.
        const replace = new Map<string, string>();
        replace.set(template.ids[0]!, randomUUID());
        for (const id of template.ids.slice(1))
          replace.set(id, id.startsWith('0x') ? `0x${randomBytes((id.length - 2) / 2).toString('hex')}` : randomUUID());
        const eventIds = template.events.map(() => randomUUID());
        for (const [i, event] of template.events.entries()) replace.set(event.id, eventIds[i]!);
        for (const hash of template.hashes) replace.set(hash, `0x${randomBytes(32).toString('hex')}`);
        for (const delivery of template.deliveries) {
          const newPublic = publicEventOf(
            template.recorded[delivery.sourceIndex]!(eventIds[delivery.sourceIndex]!),
            delivery.kind,
          ).id;
          replace.set(delivery.oldPublic, newPublic);
          replace.set(deliveryIdOf(delivery.oldPublic, delivery.endpoint), deliveryIdOf(newPublic, delivery.endpoint));
          for (const event of delivery.stream) replace.set(event.id, randomUUID());
        }
        template.pattern ??= new RegExp([...replace.keys()].join('|'), 'g');
        const pattern = template.pattern;
        const rewrite = (text: string) => text.replace(pattern, (found) => replace.get(found)!);
        const copy = (event: Row) =>
          push([
            replace.get(event.id)!,
            rewrite(event.stream_id),
            event.revision,
            event.type,
            rewrite(event.data),
            rewrite(event.metadata),
          ]);
        for (const event of template.events) copy(event);
        for (const delivery of template.deliveries) for (const event of delivery.stream) copy(event);
      }
    }
    if (pending.length > 0) flush(pending);
    options.onProgress?.(total);
    return { events: total, copies };
  } finally {
    db.close();
  }
}
