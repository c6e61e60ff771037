import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ContainerResource } from '../../../../schema/resource';
import { ContainerResource as ContainerSchema, resourceDigest } from '../../../../schema/resource';
import type { ApplyContext } from '../applier';
import type { ContainerBackend } from './container-backend';
import { containerApplier } from './container.applier';
import { DIGEST_LABEL, hostLabels, OWNER, OWNER_LABEL } from './container-labels';
import { dockerBackend } from './docker.backend';
import { podmanBackend } from './podman.backend';
import { FakeContainerEngine } from './testing/fake-container-engine';

function container(fields: Partial<ContainerResource> & { name: string; image: string }): ContainerResource {
  return ContainerSchema.parse({ shape: 'container', ...fields });
}

const engines: [string, () => ContainerBackend][] = [
  ['docker', () => dockerBackend()],
  ['podman', () => podmanBackend()],
];

describe.each(engines)('container applier over %s', (program, makeBackend) => {
  let engine: FakeContainerEngine;
  let ctx: ApplyContext;
  const applier = containerApplier(makeBackend());
  const verbs = (): string[] => engine.calls.map((argv) => (argv[1] === 'container' ? `container ${argv[2]}` : (argv[1] as string)));

  beforeEach(() => {
    engine = new FakeContainerEngine(program as 'docker' | 'podman');
    ctx = { root: '/', stateDir: '/nonexistent/state', runner: engine, hostUnit: 'nox-mesh-host.service' };
  });

  test("creates a missing container with the host's labels and starts it", async () => {
    const web = container({
      name: 'web',
      image: 'nginx:1.27',
      command: ['nginx', '-g', 'daemon off;'],
      env: { TZ: 'UTC', LANG: 'C.UTF-8' },
      ports: [{ host: 8080, container: 80, protocol: 'tcp' }, { host: 8443, container: 443, protocol: 'tcp', address: '127.0.0.1' }],
      volumes: [{ source: '/srv/www', target: '/usr/share/nginx/html', read_only: true }],
    });
    expect(await applier.observe(web, ctx)).toEqual({ present: false, differences: ['no such container'] });

    await applier.apply(web, ctx);

    expect(engine.calls.slice(1)).toEqual([
      [program, 'container', 'inspect', 'web'],
      [program, 'create', '--name', 'web',
        '--label', `${OWNER_LABEL}=${OWNER}`, '--label', `${DIGEST_LABEL}=${resourceDigest(web)}`,
        '--restart', 'unless-stopped',
        '--env', 'LANG=C.UTF-8', '--env', 'TZ=UTC',
        '--publish', '8080:80/tcp', '--publish', '127.0.0.1:8443:443/tcp',
        '--volume', '/srv/www:/usr/share/nginx/html:ro',
        'nginx:1.27', 'nginx', '-g', 'daemon off;'],
      [program, 'start', 'web'],
    ]);
    expect(engine.container('web')).toMatchObject({ running: true, labels: { [OWNER_LABEL]: OWNER } });
    expect(await applier.observe(web, ctx)).toEqual({ present: true, differences: [] });
  });

  test('reads back every field it declared as matching: IPv6 binds, named volumes, udp, restart "no"', async () => {
    const dns = container({
      name: 'dns',
      image: 'docker.io/library/unbound:latest',
      ports: [{ host: 53, container: 53, protocol: 'udp', address: '::1' }, { host: 53, container: 53, protocol: 'tcp' }],
      volumes: [{ source: 'unbound-data', target: '/var/lib/unbound', read_only: false }],
      restart: 'no',
    });
    await applier.apply(dns, ctx);
    expect(engine.calls.find((argv) => argv[1] === 'create')).toContain('[::1]:53:53/udp');
    expect(await applier.observe(dns, ctx)).toEqual({ present: true, differences: [] });
  });

  test('a container stopped by hand is drift: observe says so and apply starts it, not a new one', async () => {
    const web = container({ name: 'web', image: 'nginx:1.27' });
    await applier.apply(web, ctx);
    const id = engine.container('web')?.id;
    engine.stopByHand('web');

    expect(await applier.observe(web, ctx)).toEqual({ present: true, differences: ['not running (exited)'] });
    engine.calls.length = 0;
    await applier.apply(web, ctx);

    expect(verbs()).toEqual(['container inspect', 'start']);
    expect(engine.container('web')).toMatchObject({ id, running: true });
    expect((await applier.observe(web, ctx)).differences).toEqual([]);
  });

  test('a changed image replaces the container', async () => {
    await applier.apply(container({ name: 'web', image: 'nginx:1.27' }), ctx);
    const before = engine.container('web')?.id;
    const newer = container({ name: 'web', image: 'nginx:1.28' });

    const expectedImage = program === 'docker' ? '"nginx:1.27"' : '"docker.io/library/nginx:1.27"';
    expect((await applier.observe(newer, ctx)).differences).toEqual([`image is ${expectedImage}, declared "nginx:1.28"`]);
    engine.calls.length = 0;
    await applier.apply(newer, ctx);

    expect(verbs()).toEqual(['container inspect', 'rm', 'create', 'start']);
    expect(engine.calls[1]).toEqual([program, 'rm', '--force', 'web']);
    expect(engine.container('web')).toMatchObject({ image: 'nginx:1.28', running: true, labels: { [DIGEST_LABEL]: resourceDigest(newer) } });
    expect(engine.container('web')?.id).not.toBe(before);
    expect((await applier.observe(newer, ctx)).differences).toEqual([]);
  });

  test('a variable no longer declared is caught by the digest label and replaces the container', async () => {
    await applier.apply(container({ name: 'app', image: 'app:1', env: { MODE: 'fast', DEBUG: '1' } }), ctx);
    const withoutDebug = container({ name: 'app', image: 'app:1', env: { MODE: 'fast' } });

    expect((await applier.observe(withoutDebug, ctx)).differences).toEqual([`created from another declaration of it (its ${DIGEST_LABEL} label differs)`]);
    await applier.apply(withoutDebug, ctx);
    expect(engine.container('app')?.env).not.toContain('DEBUG=1');
    expect((await applier.observe(withoutDebug, ctx)).differences).toEqual([]);
  });

  test('says which variable differs without quoting its value', async () => {
    await applier.apply(container({ name: 'app', image: 'app:1', env: { TOKEN: 'old-secret' } }), ctx);
    const differences = (await applier.observe(container({ name: 'app', image: 'app:1', env: { TOKEN: 'new-secret', EXTRA: 'x' } }), ctx)).differences;
    expect(differences).toEqual(['env EXTRA is not set', 'env TOKEN differs from the declaration']);
    expect(differences.join(' ')).not.toMatch(/secret/);
  });

  test('removal removes a container the host created', async () => {
    await applier.apply(container({ name: 'web', image: 'nginx:1.27' }), ctx);
    expect(await applier.remove('container:web', ctx)).toBe('removed');
    expect(engine.container('web')).toBeUndefined();
    expect(engine.calls.at(-1)).toEqual([program, 'rm', '--force', 'web']);
  });

  test('removal never removes a container the host did not create', async () => {
    engine.createByHand({ name: 'db', image: 'postgres:16', labels: { 'com.example.team': 'data' } });
    engine.calls.length = 0;

    expect(await applier.remove('container:db', ctx)).toBe('forgotten');

    expect(engine.container('db')).toMatchObject({ running: true, image: 'postgres:16' });
    expect(verbs()).toEqual(['container inspect']);
  });

  test('removal of a container that is already gone is done', async () => {
    expect(await applier.remove('container:gone', ctx)).toBe('removed');
    expect(verbs()).toEqual(['container inspect']);
  });

  test("a person's container of the declared name is reported, kept, then replaced by the host's", async () => {
    engine.createByHand({ name: 'web', image: 'nginx:1.27', env: ['SECRET_KEY=abc'], publish: ['8080:80/tcp'], restart: 'unless-stopped' });
    const web = container({ name: 'web', image: 'nginx:1.27', ports: [{ host: 8080, container: 80, protocol: 'tcp' }] });
    expect((await applier.observe(web, ctx)).differences).toEqual([`not created by the host (no ${OWNER_LABEL}=${OWNER} label)`]);

    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'container-original-'));
    try {
      const kept = await applier.keepOriginal(web, ctx, dir);
      const file = path.join(dir, 'container-web.json');
      expect(kept).toBe(`container web (image ${program === 'docker' ? 'nginx:1.27' : 'docker.io/library/nginx:1.27'}, running) kept as its ${program} inspect record at ${file}`);
      const record = JSON.parse(await fs.readFile(file, 'utf8'));
      expect(record.Config.Env).toContain('SECRET_KEY=abc');
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);

      await applier.apply(web, ctx);
      expect(engine.container('web')?.labels).toMatchObject({ [OWNER_LABEL]: OWNER });
      expect(await applier.keepOriginal(web, ctx, dir)).toMatch(/already kept/);
      expect(JSON.parse(await fs.readFile(file, 'utf8')).Config.Labels).toEqual({});
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('keeps nothing when there is no container', async () => {
    expect(await applier.keepOriginal(container({ name: 'none', image: 'x:1' }), ctx, '/nonexistent/originals')).toBeUndefined();
  });

  test('an engine that cannot be reached makes the observation unreadable, and apply fails saying why', async () => {
    engine.down = true;
    const web = container({ name: 'web', image: 'nginx:1.27' });
    const observation = await applier.observe(web, ctx);
    expect(observation).toMatchObject({ present: false, differences: [] });
    expect(observation.unreadable).toMatch(program === 'docker' ? /Is the docker daemon running\?/ : /unable to connect to Podman socket/);
    await expect(applier.apply(web, ctx)).rejects.toThrow(`${program} container inspect web: exited`);
  });
});

describe.each(engines)('container hand-back over %s', (program, makeBackend) => {
  let engine: FakeContainerEngine;
  let ctx: ApplyContext;
  let dir: string;
  const applier = containerApplier(makeBackend());
  const web = container({ name: 'web', image: 'nginx:1.27' });
  const record = () => path.join(dir, 'container-web.json');
  const removals = () => engine.calls.filter((argv) => argv[1] === 'rm');

  beforeEach(async () => {
    engine = new FakeContainerEngine(program as 'docker' | 'podman');
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'container-hand-back-'));
    ctx = { root: '/', stateDir: dir, runner: engine, hostUnit: 'nox-mesh-host.service' };
  });
  afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

  test('the container that was there before, still there, is left running as it was found and its record goes', async () => {
    // Carries the host's labels (a host whose store was lost made it): adoption takes it as it is.
    const found = engine.createByHand({ name: 'web', image: 'nginx:1.27', restart: 'unless-stopped', labels: hostLabels(web) });
    expect(await applier.observe(web, ctx)).toEqual({ present: true, differences: [] });
    await applier.keepOriginal(web, ctx, dir);

    const back = await applier.handBack!('container:web', ctx, dir);

    expect(back).toEqual({ outcome: 'handed_back', what: `left in place as it was found: container web (id ${found.id.slice(0, 12)}, image ${program === 'docker' ? 'nginx:1.27' : 'docker.io/library/nginx:1.27'}, running) is the machine's own again, no longer managed by the host` });
    expect(engine.container('web')).toMatchObject({ id: found.id, running: true });
    expect(removals()).toEqual([]);
    await expect(fs.stat(record())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('one the host made after the original was removed by hand is removed, and the record of the original stays', async () => {
    const original = engine.createByHand({ name: 'web', image: 'nginx:1.26', env: ['MODE=by-hand'] });
    await applier.keepOriginal(web, ctx, dir);
    await engine.run([program, 'rm', '--force', 'web']);
    await applier.apply(web, ctx);
    const made = engine.container('web');

    const back = await applier.handBack!('container:web', ctx, dir);

    expect(back?.outcome).toBe('removed');
    expect(back?.what).toContain(`in place of the machine's original (id ${original.id.slice(0, 12)})`);
    expect(back?.what).toContain(`its ${program} inspect record stays at ${record()}`);
    expect(made?.id).not.toBe(original.id);
    expect(engine.container('web')).toBeUndefined();
    expect(JSON.parse(await fs.readFile(record(), 'utf8'))).toMatchObject({ Id: original.id });
  });

  test('one someone else put there since is left alone, neither removed nor claimed', async () => {
    engine.createByHand({ name: 'web', image: 'nginx:1.27', restart: 'unless-stopped', labels: hostLabels(web) });
    await applier.keepOriginal(web, ctx, dir);
    await engine.run([program, 'rm', '--force', 'web']);
    const theirs = engine.createByHand({ name: 'web', image: 'httpd:2' });
    engine.calls.length = 0;

    const back = await applier.handBack!('container:web', ctx, dir);

    expect(back?.outcome).toBe('forgotten');
    expect(back?.what).toMatch(/^left container web in place: it is neither the machine's original/);
    expect(engine.container('web')).toMatchObject({ id: theirs.id, running: true });
    expect(removals()).toEqual([]);
    expect(await fs.readFile(record(), 'utf8')).toContain('"Id"');
  });

  test('a record without an id removes nothing on a guess, and no record at all is nothing to hand back', async () => {
    expect(await applier.handBack!('container:web', ctx, dir)).toBeUndefined();
    engine.createByHand({ name: 'web', image: 'nginx:1.27', labels: hostLabels(web) });
    await fs.writeFile(record(), '{"Name": "/web"}\n');
    const back = await applier.handBack!('container:web', ctx, dir);
    expect(back).toMatchObject({ outcome: 'forgotten', what: expect.stringMatching(/holds no container id/) });
    expect(engine.container('web')).toBeDefined();
    expect(removals()).toEqual([]);
  });

  test('an engine that cannot be reached fails the hand-back, keeping the record', async () => {
    engine.createByHand({ name: 'web', image: 'nginx:1.27', labels: hostLabels(web) });
    await applier.keepOriginal(web, ctx, dir);
    engine.down = true;
    await expect(applier.handBack!('container:web', ctx, dir)).rejects.toThrow(`${program} container inspect web: exited`);
    expect(await fs.readFile(record(), 'utf8')).toContain('"Id"');
  });
});
