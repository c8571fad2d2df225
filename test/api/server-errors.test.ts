import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Server } from 'node:http';
import test from 'ava';
import { startTestWeir } from '../support/weir-harness.ts';

test('an error of the listening HTTP server (EMFILE on accept) is logged each time, and Weir serves on', async (t) => {
  const lines: string[] = [];
  const weir = await startTestWeir(t, {}, { log: (line) => lines.push(line) });
  // Weir's own server, as the request it answers names it.
  let server: Server | undefined;
  const seen = (message: unknown) => {
    server ??= (message as { server: Server }).server;
  };
  subscribe('http.server.request.start', seen);
  t.teardown(() => unsubscribe('http.server.request.start', seen));
  t.is((await fetch(`${weir.url}/health`)).status, 200);

  const emfile = () => Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' });
  // Unheard, the second is thrown here: in Weir, an uncaught exception that ends the process.
  t.notThrows(() => server!.emit('error', emfile()));
  t.notThrows(() => server!.emit('error', emfile()));
  const logged = lines
    .map((line) => JSON.parse(line) as { event?: string })
    .filter((l) => l.event === 'http.server_error');
  t.is(logged.length, 2, 'each error logged');
  t.like(logged[0], { level: 50, err: { code: 'EMFILE' } });
  t.is((await fetch(`${weir.url}/health`)).status, 200);
});
