import test from 'ava';
import { endpointLabel, maskUserinfo } from './mask-userinfo.ts';

test('a user and password in a URL, well formed or not, are masked; a URL without them is shown as is', (t) => {
  t.is(maskUserinfo('http://u:secret@host'), 'http://***@host');
  t.is(maskUserinfo('ftp://u:secret@host:21/path?q=1'), 'ftp://***@host:21/path?q=1');
  t.is(maskUserinfo('http:/u:p@ss@host'), 'http:/***@host');
  t.is(maskUserinfo('u:secret@host'), '***@host');
  t.is(maskUserinfo('https://pay.example.com/x?to=a@b'), 'https://pay.example.com/x?to=a@b');
  t.is(maskUserinfo('127.0.0.1:8080'), '127.0.0.1:8080');
});

test("an RPC endpoint is shown by scheme and host only: a provider's key in the path, the query or the user is never printed", (t) => {
  t.is(endpointLabel('https://solana-mainnet.example.com/v2/KEY123'), 'https://solana-mainnet.example.com/…');
  t.is(endpointLabel('https://rpc.example.com/?api-key=KEY123'), 'https://rpc.example.com/…');
  t.is(endpointLabel('wss://u:KEY123@rpc.example.com'), 'wss://rpc.example.com/…');
  t.is(endpointLabel('http://127.0.0.1:8899'), 'http://127.0.0.1:8899');
  t.is(endpointLabel('not a url/KEY123'), 'not a url/…');
});
