import type Koa from 'koa';
import type { RouterContext } from '@koa/router';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { TransactionRecovery } from '../chain-ingest/evm/recover-transaction.ts';
import type { Rail } from '../chain-ingest/rail.ts';
import type { Environment, EventStore } from '../event-store/event-store.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../tenancy/secrets.ts';

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
  /** Payment recovery by transaction hash; absent when this Weir follows no EVM network. */
  transactionRecovery?: TransactionRecovery;
};

export type Tenant = { organizationId: string; environment: Environment; keyId: string };

export type ApiState = Koa.DefaultState & { tenant: Tenant; rawBody: string; body: unknown };

export type ApiContext = RouterContext<ApiState>;
