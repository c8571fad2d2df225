import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { parse } from 'yaml';

/*
 * Docker cannot run here: the compose file is checked as YAML and for the shape the production
 * stack needs, and the entrypoint is run with sh as the container would run it.
 */

const root = new URL('../../', import.meta.url);

type Service = {
  image?: string;
  build?: unknown;
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  restart?: string;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: unknown };
  container_name?: string;
};

const compose = async () =>
  parse(await readFile(new URL('docker-compose.yml', root), 'utf8')) as {
    services: Record<string, Service>;
    volumes: Record<string, unknown>;
  };

test('docker-compose.yml: every service has a health check and a restart policy; Weir waits for the three it uses', async (t) => {
  const { services } = await compose();
  t.deepEqual(Object.keys(services).sort(), ['kurrentdb', 'mongodb', 'nats', 'weir']);
  for (const [name, service] of Object.entries(services)) {
    t.truthy(service.healthcheck?.test.length, `${name} has a health check`);
    t.is(service.restart, 'unless-stopped', `${name} restarts`);
  }
  t.deepEqual(services['weir']!.depends_on, {
    nats: { condition: 'service_healthy' },
    kurrentdb: { condition: 'service_healthy' },
    mongodb: { condition: 'service_healthy' },
  });
  const env = services['weir']!.environment!;
  t.is(env['NATS_URL'], 'nats://nats:4222');
  t.regex(env['KURRENTDB_URL']!, /^kurrentdb:\/\/kurrentdb:2113/);
  t.regex(env['MONGODB_URL']!, /^mongodb:\/\/mongodb:27017\//);
});

test('docker-compose.yml can scale Weir: replicas from WEIR_REPLICAS, a port range, no fixed container name, a data dir per replica under one volume', async (t) => {
  const { services, volumes } = await compose();
  const weir = services['weir']!;
  // Compose interpolates it from the environment or .env.
  t.is(weir.deploy?.replicas, ['$', '{WEIR_REPLICAS:-1}'].join(''));
  t.is(weir.container_name, undefined, 'a fixed name allows one container');
  t.deepEqual(weir.ports, ['127.0.0.1:8080-8089:8080'], 'one host port per replica, not one for all');
  t.deepEqual(weir.volumes, ['weir-data:/data']);
  t.true('weir-data' in volumes);
  t.is(weir.environment!['WEIR_REPLICA_DATA_ROOT'], '/data');
  t.is(weir.environment!['WEIR_DATA_DIR'], undefined, 'one data dir for all replicas would be locked by the first');
  t.is(weir.environment!['WEIR_AUDIT_KEY_FILE'], '/data/audit-operator.key', 'checkpoints signed by one key');
  const dockerfile = await readFile(new URL('Dockerfile', root), 'utf8');
  t.regex(dockerfile, /COPY --chmod=0755 deploy\/docker-entrypoint\.sh \/usr\/local\/bin\/weir-entrypoint/);
  t.regex(dockerfile, /ENTRYPOINT \["\/usr\/local\/bin\/weir-entrypoint"\]/);
});

test('the entrypoint gives each replica a data dir named for its host under the shared root, and leaves WEIR_DATA_DIR alone without one', async (t) => {
  const entrypoint = new URL('deploy/docker-entrypoint.sh', root).pathname;
  t.true(((await stat(entrypoint)).mode & 0o111) !== 0, 'executable');
  const shared = await mkdtemp(join(tmpdir(), 'weir-entrypoint-'));
  t.teardown(() => rm(shared, { recursive: true, force: true }));
  const run = promisify(execFile);
  const printed = async (env: Record<string, string>) =>
    (
      await run('sh', [entrypoint, 'sh', '-c', 'echo "$WEIR_DATA_DIR"'], {
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
      })
    ).stdout.trim();
  const host = (await run('hostname', [])).stdout.trim();
  const dir = await printed({ WEIR_REPLICA_DATA_ROOT: `${shared}/` });
  t.is(dir, join(shared, host));
  t.true((await stat(dir)).isDirectory());
  const single = join(shared, 'single');
  t.is(await printed({ WEIR_DATA_DIR: single }), single);
  t.true((await stat(single)).isDirectory());
});
