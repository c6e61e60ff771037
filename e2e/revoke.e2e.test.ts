import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RevokeOutcome } from '../actors/controller/release/revoke-node';
import type { HostStatus } from '../actors/host/run/host-status';
import { MeshRig } from './mesh-rig';
import { jsonOf } from './run-cli';
import { done, notYet, until } from './until';

// A gone node revoked with `mesh-control node revoke`, every part a real process: the broker
// drops the running host at once, the host says so and lets go of its store, and the machine is
// enrolled again beside the running host, which takes up the new identity by itself. With
// MESH_E2E_KEEP set, the mesh directory is left for a look.

describe('revoking a node whose host is running', () => {
  let parent: string;
  let rig: MeshRig;

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-revoke-'));
    rig = new MeshRig({ dir: parent, hosts: ['a'] });
    await rig.start();
  }, 90_000);

  afterAll(async () => {
    await rig?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('drops the host, lists what the mesh issued, and the host lets its store go so enrol runs beside it', async () => {
    const issued = await rig.issueToken({ new: true });
    const enrolled = await rig.enrol('a', issued.token);
    const host = rig.host('a');
    await host.waitFor(/linked to \S+ as node a/);
    const from = host.mark();

    const outcome = jsonOf<RevokeOutcome>(await rig.control(['node', 'revoke', 'a', '--why', 'stolen from the car', '--json']));
    expect(outcome).toMatchObject({ node: 'a', why: 'stolen from the car' });
    expect(outcome.credentials).toEqual(expect.arrayContaining([
      expect.objectContaining({ kind: 'broker_user', id: enrolled.nkey_public, state: 'removed' }),
      expect.objectContaining({ kind: 'overlay_key', id: enrolled.wireguard_public_key, state: 'dropped' }),
      expect.objectContaining({ kind: 'token', id: issued.token_id, state: 'used' }),
    ]));
    expect((await rig.nodes()).find((node) => node.name === 'a')?.lifecycle_state).toBe('revoked');
    const again = await rig.control(['node', 'revoke', 'a']);
    expect([again.code, again.stderr]).toEqual([1, expect.stringMatching(/node a is revoked already[\s\S]*mesh-control token issue --node a/)]);

    // Dropped at once, refused from then on, and after a few refusals taken as revoked.
    await host.waitFor(/the connection to the broker closed/, { from });
    await host.waitFor(/^revoked: the broker has refused node a's credentials/m, { from, timeoutMs: 60_000 });
    const status = await until('the status file to say revoked', async () => {
      const text = await fs.readFile(path.join(rig.hostStateDir('a'), 'host-status.json'), 'utf8').catch(() => '{}');
      const parsed = JSON.parse(text) as Partial<HostStatus>;
      return parsed.revoked !== undefined ? done(parsed) : notYet(text);
    });
    expect(status.revoked?.detail).toMatch(/enrol this machine again now, without stopping the host/);
    expect((await rig.hostCli('a', ['status'])).stdout).toMatch(/^revoked\s+the broker has refused/m);

    // Enrolled again while the host runs: the store is free, and the host takes the new identity up.
    const token = await rig.issueToken({ node: 'a' });
    const reenrolled = await rig.enrol('a', token.token);
    expect(reenrolled).toMatchObject({ node: 'a' });
    expect(reenrolled.nkey_public).not.toBe(enrolled.nkey_public);
    await host.waitFor(/the store holds a new identity .*: taking it up/, { from });
    await host.waitFor(/linked to \S+ as node a\n[\s\S]*took declaration generation/, { from });
    expect(host.running).toBe(true);
    await until('node a to be enrolled again', async () => {
      const node = (await rig.nodes()).find((n) => n.name === 'a');
      return node?.lifecycle_state === 'enrolled' ? done(node) : notYet(JSON.stringify(node));
    });
  }, 120_000);
});
