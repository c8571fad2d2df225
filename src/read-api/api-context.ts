import type { PayTransactionBuilder } from '../chain-ingest/solana/pay-transaction.ts';
import type Koa from 'koa';
import type { RouterContext } from '@koa/router';
import type { ApiKeyScope } from '../actors/api-key.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { TransactionRecovery } from '../chain-ingest/evm/recover-transaction.ts';
import type { Rail } from '../chain-ingest/rail.ts';
import type { Environment, EventStore } from '../event-store/event-store.ts';
import type { ChainProgress } from '../hosted/checkout-status.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import { newId, type IdSource } from '../shared/ids.ts';
import type { SecretBox } from '../tenancy/secrets.ts';
import type { WebhookTargetPolicy } from '../webhooks/webhook-target.ts';

/** Everything the HTTP layer needs, built once by the composition root. */
export type ApiDeps = {
  clock: Clock;
  eventStore: EventStore;
  readStore: ReadStore;
  commands: CommandHandler;
  projections: ProjectionRunner;
  rail: Rail;
  secretBox: SecretBox;
  /** Base URL of this server as payers reach it (hosted pages). */
  publicUrl: string;
  /** Builds the Solana Pay transfer a payer's Solana wallet signs on the hosted page; absent: no Solana network. */
  solanaPay?: PayTransactionBuilder;
  /** Payment recovery by transaction hash; absent when this Weir follows no EVM network. */
  transactionRecovery?: TransactionRecovery;
  /** Which environments' webhook endpoints may point at internal addresses; unset: test only. */
  webhookTargets?: WebhookTargetPolicy;
  /** How far each followed chain is, for "n of m confirmations" on the hosted page; unset: m only. */
  chainProgress?: ChainProgress;
  /** The operator public keys the log's checkpoints must be signed with (`GET /audit/verify`); unset: none known. */
  auditKeys?: readonly string[];
};

export type Tenant = {
  organizationId: string;
  environment: Environment;
  /** The API key's id; for an in-process call (the dashboard), its actor. Rate limits count by it. */
  keyId: string;
  /** Who the log names for what this request writes: `api_key:<id>`, `user:<id>`. */
  actor: string;
  /** The client's address, for the audit trail. */
  clientAddress?: string;
  /** The API key's scope; absent for an in-process call (the dashboard, whose roles decide): full. */
  scope?: ApiKeyScope;
};

export type ApiState = Koa.DefaultState & {
  tenant: Tenant;
  rawBody: string;
  body: unknown;
  /** A `multipart/form-data` body as read (only PUT /organization/brand takes one); `body` stays unset. */
  multipart?: Buffer;
  /** The ids this request gives the records it creates (seeded by its Idempotency-Key, if it has one); `newId` where unset. */
  newId?: IdSource;
  /** This request's id (`X-Request-Id`), set by the request log; in its error lines too. */
  requestId?: string;
};

export type ApiContext = RouterContext<ApiState>;

/** Where the records this request creates get their ids (see `ApiState.newId`). */
export const idsOf = (ctx: { state: ApiState }): IdSource => ctx.state.newId ?? newId;
