import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyHostState } from '../../../schema/host-state';
import { envelopeDigest, generateNodeIdentity, generateSigningKeyPair, sealEnvelope } from '../../shared/crypto';
import { freePort } from '../../../e2e/mesh-rig';
import { HostStore } from '../store/host-store';
import { loadedByRunUntil, packagesAmong } from './testing/loaded-modules';

// `nox-mesh-host run` on a node holding a signed declaration, in a real process: it verifies the
// declaration before every pass, with Node's own Ed25519, and so never loads libsodium (some
// 10 MB of a process that idles for months).

let root: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'enrolled-footprint-'));
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function enrolledWithDeclaration(): Promise<void> {
  const controller = generateSigningKeyPair();
  const payload = { node: 'footprint', epoch: 1, generation: 1, kind: 'full', issued_at: '2026-12-01T08:00:00Z', resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'declared\n' } }] };
  const envelope = sealEnvelope(payload, controller.secret_key);
  await new HostStore(path.join(root, 'var/lib/mesh-host')).save({
    ...emptyHostState(),
    identity: { node: 'footprint', ...generateNodeIdentity() },
    // A closed port: the host reconciles from its store whether or not it links.
    pins: { broker_url: `tls://127.0.0.1:${await freePort()}`, broker_fingerprint: '0'.repeat(64), controller_public_key: controller.public_key },
    last_declaration: { envelope, applied_generation: 1, digest: envelopeDigest(envelope) },
    highest_epoch: 1,
    sequence: 1,
  });
}

test('an enrolled host verifies its declaration and applies it without loading libsodium or the adoption machine', async () => {
  await enrolledWithDeclaration();
  const { files } = await loadedByRunUntil(root, /^pass \([^)]*\): /m);

  expect(await fs.readFile(path.join(root, 'etc/motd'), 'utf8')).toBe('declared\n');
  const packages = packagesAmong(files);
  expect(packages).toContain('@nats-io/transport-node');
  expect(packages.filter((name) => name.startsWith('libsodium'))).toEqual([]);
  // Nothing on the machine was there before the host: nothing to adopt, so no adoption machine.
  expect(files.filter((file) => /machines[\\/]adoption\.machine\.ts$/.test(file))).toEqual([]);
});
