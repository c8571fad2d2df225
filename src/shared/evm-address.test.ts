import test from 'ava';
import { evmChecksumHolds, shownAddress } from './evm-address.ts';

test('an EVM address is shown in its EIP-55 checksum whatever case it came in; Tron and Solana addresses as they are', (t) => {
  const checksummed = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
  t.is(shownAddress(checksummed.toLowerCase()), checksummed);
  t.is(shownAddress(`0x${checksummed.slice(2).toUpperCase()}`), checksummed);
  t.is(shownAddress(checksummed), checksummed);
  t.is(shownAddress('TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7'), 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7');
  t.is(shownAddress('So11111111111111111111111111111111111111112'), 'So11111111111111111111111111111111111111112');
});

test('a checksum computed once answers the same the next times, for showing and for checking alike', (t) => {
  const checksummed = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
  for (let time = 0; time < 2; time++) {
    t.is(shownAddress(checksummed.toLowerCase()), checksummed);
    t.true(evmChecksumHolds(checksummed));
    t.false(evmChecksumHolds(`${checksummed.slice(0, -1)}9`.replace('fB69', 'Fb69')));
  }
});
