/**
 * `weir serve` for tests that publish test-rail transfers by hand (chain-publisher.ts): the same
 * settings (arguments and environment), plus the test rail injected as `overrides.extraRails`. No
 * operator setting offers the test rail: a page nobody can pay is never offered for real.
 */
import { readConfig } from '../../src/app/config.ts';
import { PRIVATE_UMASK } from '../../src/app/data-dir.ts';
import { startWeir } from '../../src/app/start-weir.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';

process.umask(PRIVATE_UMASK);
const weir = await startWeir(readConfig(process.argv.slice(2), process.env), { extraRails: [createTestRail()] });
const shutdown = (signal: string) => {
  console.log(`[weir] ${signal}: stopping`);
  weir.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.once('SIGINT', () => shutdown('SIGINT'));
process.once('SIGTERM', () => shutdown('SIGTERM'));
