import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ControllerStatus } from '../schema/controller-status';
import { MeshRig } from './mesh-rig';
import { done, notYet, until } from './until';

// A machine that lost its store (state.json and its last-good copy both gone) is enrolled again
// as the same node, every part a real process: the broker, the controller, `nox-mesh-host run`
// and enrol. The controller hands back what the node last reported owning; the host removes
// what of it is no longer declared, applies what is, and touches nothing else. With
// MESH_E2E_KEEP set, the mesh directory is left for a look.

async function readText(file: string): Promise<string | undefined> {
  return fs.readFile(file, 'utf8').catch(() => undefined);
}

describe('a host that lost its store, enrolled again as the same node', () => {
  let parent: string;
  let rig: MeshRig;
  const at = (file: string): string => path.join(rig.hostRoot('a'), file);
  const declare = async (name: string, resources: unknown[]): Promise<void> => {
    const file = path.join(parent, `${name}.json`);
    await fs.writeFile(file, JSON.stringify({ resources }));
    await rig.declare('a', file);
  };
  const holds = (what: string, files: Record<string, string | undefined>) =>
    until(what, async () => {
      const found: Record<string, string | undefined> = {};
      for (const file of Object.keys(files)) found[file] = await readText(at(file));
      return JSON.stringify(found) === JSON.stringify(files) ? done(found) : notYet(JSON.stringify(found, null, 2));
    });

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-store-loss-'));
    rig = new MeshRig({ dir: parent, hosts: ['a'] });
    await rig.start();
  }, 90_000);

  afterAll(async () => {
    await rig?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('removes what is no longer declared, applies what is, and leaves the operator\'s own files', async () => {
    const issued = await rig.issueToken({ new: true });
    expect((await rig.enrol('a', issued.token)).node).toBe('a');
    await rig.host('a').waitFor(/^pass \(/m);
    const from = rig.host('a').mark();
    await declare('first', [
      { shape: 'directory', path: '/srv/app', mode: '0755' },
      { shape: 'file', path: '/srv/app/keep.conf', content: { text: 'kept\n' } },
      { shape: 'file', path: '/srv/app/old.conf', content: { text: 'old\n' } },
      { shape: 'file', path: '/etc/orphan.conf', content: { text: 'orphan\n' } },
    ]);
    await holds('the first declaration applied', { 'srv/app/keep.conf': 'kept\n', 'srv/app/old.conf': 'old\n', 'etc/orphan.conf': 'orphan\n' });
    // Its report is what the controller hands back: a host stopped sends what it queued first.
    await rig.host('a').waitFor(/^pass \(.*\n/m, { from });
    // What is handed back is the controller's copy of the node's last report: the store is lost
    // only once the controller holds it (on a loaded machine it can lag the host's pass).
    await until('the controller to hold the report on the first declaration', async () => {
      const result = await rig.control(['status', '--json']);
      let status: ControllerStatus;
      try {
        status = JSON.parse(result.stdout) as ControllerStatus;
      } catch {
        return notYet(`${result.stdout}${result.stderr}`);
      }
      const waiting = status.declarations.outstanding.nodes.map((entry) => entry.node);
      return waiting.includes('a') ? notYet(`outstanding for: ${waiting.join(', ')}`) : done(true);
    });
    expect((await rig.stopHost('a')).code).toBe(0);

    // The store is lost; the machine keeps what the host made, and a person's own file beside it.
    await fs.rm(path.join(rig.hostStateDir('a'), 'state.json'));
    await fs.rm(path.join(rig.hostStateDir('a'), 'state.last-good.json'));
    await fs.writeFile(at('srv/app/operator-note.txt'), 'mine\n');
    // Meanwhile the declaration moved on: old.conf and orphan.conf are no longer wanted.
    await declare('second', [
      { shape: 'directory', path: '/srv/app', mode: '0755' },
      { shape: 'file', path: '/srv/app/keep.conf', content: { text: 'kept\n' } },
      { shape: 'file', path: '/srv/app/new.conf', content: { text: 'new\n' } },
    ]);

    const again = await rig.issueToken({ node: 'a' });
    expect(await rig.enrol('a', again.token)).toMatchObject({ node: 'a' });
    const host = await rig.startHost('a');

    await holds('the orphans gone and the declared files held', {
      'srv/app/keep.conf': 'kept\n',
      'srv/app/new.conf': 'new\n',
      'srv/app/old.conf': undefined,
      'etc/orphan.conf': undefined,
      'srv/app/operator-note.txt': 'mine\n',
    });
    expect(host.output()).toMatch(/store rebuilt: took back .*file:\/srv\/app\/old\.conf/);
    expect(host.output()).toMatch(/store rebuilt: took back .*file:\/etc\/orphan\.conf/);
    const owned = await until('the host to own the second declaration', async () => {
      const keys = (await rig.owned('a')).resources.map((r) => r.key).filter((key) => key.startsWith('file:/srv') || key.startsWith('directory:/srv') || key === 'file:/etc/orphan.conf');
      return keys.includes('file:/srv/app/new.conf') ? done(keys.sort()) : notYet(keys.join(', '));
    });
    expect(owned).toEqual(['directory:/srv/app', 'file:/srv/app/keep.conf', 'file:/srv/app/new.conf']);
    // What the host had made is owned as made, not adopted from the machine: keep.conf (already as
    // declared) and the overlay's files (adopted on the way, before the full declaration came).
    expect((await rig.owned('a')).resources.filter((r) => r.adopted === true).map((r) => r.key)).toEqual([]);
  }, 90_000);
});
