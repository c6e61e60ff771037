import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { overlayFor } from './overlay-for';
import { overlayResources } from './overlay-resources';

// The overlay-sync action's script, run by a real sh against fakes of `wg`, `wg-quick` and `ip`
// that record what they are asked (no interface can be made in a unit test). The e2e test
// (e2e/overlay.e2e.test.ts) runs it against real wireguard-go interfaces.

const KEY = (c: string): string => `${c.repeat(43)}=`;
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'overlay-sync-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function fakeTools(bin: string, log: string): Promise<void> {
  await fs.mkdir(bin, { recursive: true });
  const tool = async (name: string, body: string): Promise<void> => fs.writeFile(path.join(bin, name), `#!/bin/sh\necho "${name} $*" >>"${log}"\n${body}\n`, { mode: 0o755 });
  // Keys with a slash in them, as base64 keys often have: only the allowed IPs may become routes.
  await tool('wg', `case "$*" in
  "show mesh0 allowed-ips") printf 'ab/cdefghijklmnopqrstuvwxyz0123456789ABCDEFG=\\t10.77.0.2/32\\nxy/z0123456789abcdefghijklmnopqrstuvwxyzABCD=\\t10.77.0.3/32 10.77.0.9/32\\n' ;;
esac`);
  await tool('wg-quick', 'cat "$2"');
  await tool('ip', `case "$*" in
  "route show dev mesh0") printf '10.77.0.2 scope link\\n10.77.0.5 scope link\\n' ;;
esac`);
}

test('syncs peers and key, routes the allowed IPs and only them, and stamps the configuration made live', async () => {
  const root = path.join(dir, 'root');
  const bin = path.join(dir, 'bin');
  const log = path.join(dir, 'calls.log');
  await fakeTools(bin, log);
  const overlay = overlayFor({ name: 'alpha', address: '10.77.0.1', wireguard_public_key: KEY('A') }, [{ name: 'alpha', address: '10.77.0.1', wireguard_public_key: KEY('A') }, { name: 'bravo', address: '10.77.0.2', wireguard_public_key: KEY('E') }], 51820);
  const resources = overlayResources('alpha', overlay, 'mesh0', { init: 'none', wireguard: 'wireguard-go' });
  const action = resources.find((resource) => resource.shape === 'action');
  const config = resources.find((resource) => resource.shape === 'file' && resource.path === '/etc/wireguard/mesh0.conf');
  if (action?.shape !== 'action' || config?.shape !== 'file' || !('text' in config.content) || !('creates' in action.guard)) throw new Error('expected the sync action and the configuration');
  await fs.mkdir(path.join(root, 'etc', 'wireguard'), { recursive: true });
  await fs.writeFile(path.join(root, 'etc', 'wireguard', 'mesh0.conf'), config.content.text);
  await fs.mkdir(path.join(root, 'run', 'mesh'), { recursive: true });
  await fs.writeFile(path.join(root, 'run', 'mesh', 'overlay-mesh0.0000000000000000'), '');

  const [program, ...args] = action.argv as [string, ...string[]];
  const result = spawnSync(program, args, { env: { PATH: `${bin}:${process.env.PATH ?? ''}`, MESH_ROOT: root }, encoding: 'utf8' });
  expect([result.status, result.stderr]).toEqual([0, '']);

  const calls = (await fs.readFile(log, 'utf8')).trim().split('\n');
  expect(calls).toContainEqual(expect.stringMatching(/^wg syncconf mesh0 \S+$/));
  // The key file PostUp names is set again only where it exists: here it does not.
  expect(calls.filter((call) => call.includes('private-key'))).toEqual([]);
  expect(calls.filter((call) => call.startsWith('ip route replace') || call.startsWith('ip route del'))).toEqual([
    'ip route replace 10.77.0.2/32 dev mesh0',
    'ip route replace 10.77.0.3/32 dev mesh0',
    'ip route replace 10.77.0.9/32 dev mesh0',
    'ip route del 10.77.0.5/32 dev mesh0',
  ]);
  expect(await fs.readdir(path.join(root, 'run', 'mesh'))).toEqual([path.basename(action.guard.creates)]);
});

test('leaves an interface that is not up alone, and still stamps the configuration', async () => {
  const root = path.join(dir, 'down');
  const bin = path.join(dir, 'bin-down');
  const log = path.join(dir, 'down.log');
  await fs.mkdir(bin, { recursive: true });
  await fs.writeFile(path.join(bin, 'wg'), `#!/bin/sh\necho "wg $*" >>"${log}"\nexit 1\n`, { mode: 0o755 });
  const overlay = overlayFor({ name: 'alpha', address: '10.77.0.1', wireguard_public_key: KEY('A') }, [], 51820);
  const action = overlayResources('alpha', overlay, 'mesh0', { init: 'none', wireguard: 'kernel' }).find((resource) => resource.shape === 'action');
  if (action?.shape !== 'action' || !('creates' in action.guard)) throw new Error('expected the sync action');
  const [program, ...args] = action.argv as [string, ...string[]];
  const result = spawnSync(program, args, { env: { PATH: `${bin}:${process.env.PATH ?? ''}`, MESH_ROOT: root }, encoding: 'utf8' });
  expect([result.status, result.stderr]).toEqual([0, '']);
  expect((await fs.readFile(log, 'utf8')).trim().split('\n')).toEqual(['wg show mesh0']);
  await expect(fs.stat(path.join(root, action.guard.creates))).resolves.toBeDefined();
});
