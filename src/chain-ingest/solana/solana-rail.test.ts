import test from 'ava';
import { generateKeyPairSigner, isAddress } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { TOKEN_PROGRAM_ADDRESS } from './define-network.ts';
import { solanaDevnet, solanaMainnet } from './networks.ts';
import { createSolanaRail } from './solana-rail.ts';

test('the rail offers each network in its environment and derives one reference per (network, session, wallet)', async (t) => {
  const rail = createSolanaRail({ networks: [solanaMainnet, solanaDevnet] });
  t.deepEqual(
    rail.networks('live').map((n) => n.network),
    ['solana-mainnet'],
  );
  t.deepEqual(
    rail.networks('test').map((n) => n.network),
    ['solana-devnet'],
  );
  const network = rail.networks('live')[0]!;
  const merchantAddress = (await generateKeyPairSigner()).address;
  const input = { network, organizationId: 'org', checkoutSessionId: 'cs_1', merchantAddress };
  const reference = rail.depositAddress(input);
  t.true(isAddress(reference));
  t.is(rail.depositAddress(input), reference, 'the same again: nothing stored');
  t.not(rail.depositAddress({ ...input, checkoutSessionId: 'cs_2' }), reference);
  t.is(rail.unpayableAddress({ network, address: merchantAddress }), null);
  const [ata] = await findAssociatedTokenPda({
    owner: merchantAddress,
    mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' as never,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  t.regex(rail.unpayableAddress({ network, address: ata }) ?? '', /token account/);
});
