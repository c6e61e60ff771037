import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Declaration } from '../../../schema/declaration';
import { overlayFor, type OverlayMember } from './overlay-for';
import { overlayResources } from './overlay-resources';

// The last character before `=` is one a 32-byte key can end with.
const KEY = (c: string): string => `${c.repeat(43)}=`;
const alpha: OverlayMember = { name: 'alpha', address: '10.77.0.1', wireguard_public_key: KEY('A') };
const bravo: OverlayMember = { name: 'bravo', address: '10.77.0.2', wireguard_public_key: KEY('E') };
const charlie: OverlayMember = { name: 'charlie', address: '10.77.0.3', wireguard_public_key: KEY('I') };

describe('the overlay of one node', () => {
  test('lists every other node as a peer routing its /32, and every node by name, itself included', () => {
    const overlay = overlayFor(bravo, [charlie, alpha, bravo], 51820);
    expect(overlay).toEqual({
      address: '10.77.0.2/32',
      public_key: KEY('E'),
      listen_port: 51820,
      peers: [
        { name: 'alpha', public_key: KEY('A'), allowed_ips: ['10.77.0.1/32'] },
        { name: 'charlie', public_key: KEY('I'), allowed_ips: ['10.77.0.3/32'] },
      ],
      names: [
        { name: 'alpha', address: '10.77.0.1' },
        { name: 'bravo', address: '10.77.0.2' },
        { name: 'charlie', address: '10.77.0.3' },
      ],
    });
  });

  test('is written as a 0600 WireGuard file that reads its private key from the host\'s state directory', () => {
    const [wireguard] = overlayResources('bravo', overlayFor(bravo, [alpha, bravo], 51820), 'mesh0', { init: 'systemd' });
    expect(wireguard).toMatchObject({ shape: 'file', path: '/etc/wireguard/mesh0.conf', mode: '0600' });
    const text = wireguard?.shape === 'file' && 'text' in wireguard.content ? wireguard.content.text : '';
    expect(text).toContain('[Interface]\nAddress = 10.77.0.2/32\nListenPort = 51820\nPostUp = wg set %i private-key /var/lib/mesh-host/wireguard.key\n');
    expect(text).toContain(`[Peer]\nPublicKey = ${KEY('A')}\nAllowedIPs = 10.77.0.1/32\n`);
    expect(text).not.toMatch(/PrivateKey/);
  });

  test('names the key where the host said it keeps it, under its --state-dir or --root, not the default directory', () => {
    // The bug pinned: PostUp named /var/lib/mesh-host/wireguard.key whatever the host's state directory was.
    const [wireguard] = overlayResources('bravo', overlayFor(bravo, [alpha, bravo], 51820), 'mesh0', { init: 'systemd', wireguard_key_path: '/srv/hosts/b/var/lib/mesh-host/wireguard.key' });
    const text = wireguard?.shape === 'file' && 'text' in wireguard.content ? wireguard.content.text : '';
    expect(text).toContain('\nPostUp = wg set %i private-key /srv/hosts/b/var/lib/mesh-host/wireguard.key\n');
    expect(text).not.toContain('private-key /var/lib/');
  });

  test('quotes a key path with a space or a semicolon so wg-quick and the sync action read it as one path', () => {
    const keyPath = '/tmp/mesh hosts/b;x/wireguard.key';
    const [wireguard, ...rest] = overlayResources('bravo', overlayFor(bravo, [alpha, bravo], 51820), 'mesh0', { init: 'systemd', wireguard: 'kernel', wireguard_key_path: keyPath });
    const text = wireguard?.shape === 'file' && 'text' in wireguard.content ? wireguard.content.text : '';
    const postUp = /^PostUp = (.*)$/m.exec(text)?.[1] ?? '';
    expect(postUp).toBe(`wg set %i private-key '${keyPath}'`);
    // wg-quick runs the hook with `eval` after putting the interface's name for %i.
    const words = execFileSync('bash', ['-c', `eval "printf '%s\\n' \${1//%i/mesh0}"`, 'hook', postUp], { encoding: 'utf8' });
    expect(words).toBe(`wg\nset\nmesh0\nprivate-key\n${keyPath}\n`);
    // The sync action reads the path back out of the configuration with its own sed line.
    const sync = rest.find((resource) => resource.shape === 'action');
    const script = sync?.shape === 'action' ? sync.argv.join(' ') : '';
    const read = /key=\$\((sed .*\.conf" \| sed "[^"]*")\)/.exec(script)?.[1] ?? '';
    expect(read).not.toBe('');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mesh-postup-'));
    try {
      mkdirSync(path.join(dir, 'etc', 'wireguard'), { recursive: true });
      writeFileSync(path.join(dir, 'etc', 'wireguard', 'mesh0.conf'), text);
      const got = execFileSync('sh', ['-c', `root=$1; iface=mesh0; printf '%s' "$(${read})"`, 'sync', dir], { encoding: 'utf8' });
      expect(got).toBe(keyPath);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('writes the names in hosts form', () => {
    const [, hosts] = overlayResources('alpha', overlayFor(alpha, [alpha, bravo], 51820), 'mesh0', { init: 'none' });
    expect(hosts).toMatchObject({ shape: 'file', path: '/etc/mesh/hosts', mode: '0644' });
    expect(hosts?.shape === 'file' && 'text' in hosts.content ? hosts.content.text : '').toMatch(/^10\.77\.0\.1\talpha\n10\.77\.0\.2\tbravo\n$/m);
  });

  test('names the wg-quick service the init runs, and none on a machine without an init the mesh drives', () => {
    const overlay = overlayFor(alpha, [alpha], 51820);
    expect(overlayResources('alpha', overlay, 'mesh0', { init: 'systemd' })[2]).toEqual({ shape: 'service', name: 'wg-quick@mesh0', state: 'running', enabled: true });
    expect(overlayResources('alpha', overlay, 'mesh0', { init: 'openrc' })[2]).toEqual({ shape: 'service', name: 'wg-quick.mesh0', state: 'running', enabled: true });
    expect(overlayResources('alpha', overlay, 'mesh0', { init: 'none' }).map((resource) => resource.shape)).toEqual(['file', 'file']);
    expect(overlayResources('alpha', overlay, 'mesh0', undefined)).toHaveLength(2);
  });

  test('makes a declaration the overlay contract accepts', () => {
    const overlay = overlayFor(alpha, [alpha, bravo, charlie], 51820);
    const parsed = Declaration.safeParse({
      node: 'alpha', epoch: 1, generation: 1, kind: 'overlay', issued_at: '2026-12-01T10:00:00.000Z',
      resources: overlayResources('alpha', overlay, 'mesh0', { init: 'openrc', wireguard: 'wireguard-go' }).filter((resource) => resource.shape !== 'action'), overlay,
    });
    expect(parsed.success).toBe(true);
  });

  test('tells the service to use wireguard-go where the profile says the kernel has no WireGuard', () => {
    const overlay = overlayFor(alpha, [alpha], 51820);
    const systemd = overlayResources('alpha', overlay, 'mesh0', { init: 'systemd', wireguard: 'wireguard-go' });
    expect(systemd.map((resource) => resource.shape)).toEqual(['file', 'file', 'file', 'service', 'action']);
    expect(systemd[2]).toMatchObject({ path: '/etc/systemd/system/wg-quick@mesh0.service.d/mesh-userspace.conf', content: { text: expect.stringContaining('[Service]\nEnvironment=WG_QUICK_USERSPACE_IMPLEMENTATION=wireguard-go\n') } });
    const openrc = overlayResources('alpha', overlay, 'mesh0', { init: 'openrc', wireguard: 'wireguard-go' });
    expect(openrc[2]).toMatchObject({ path: '/etc/conf.d/wg-quick.mesh0', content: { text: expect.stringContaining('export WG_QUICK_USERSPACE_IMPLEMENTATION=wireguard-go\n') } });
    expect(overlayResources('alpha', overlay, 'mesh0', { init: 'systemd', wireguard: 'kernel' }).map((resource) => resource.shape)).toEqual(['file', 'file', 'service', 'action']);
  });

  test('declares no service on a machine without WireGuard, only the files', () => {
    const overlay = overlayFor(alpha, [alpha], 51820);
    expect(overlayResources('alpha', overlay, 'mesh0', { init: 'systemd', wireguard: 'none' }).map((resource) => resource.shape)).toEqual(['file', 'file']);
  });

  test('syncs a running interface once per configuration: a new peer set is a new guard', () => {
    const before = overlayResources('alpha', overlayFor(alpha, [alpha, bravo], 51820), 'mesh0', { init: 'none', wireguard: 'wireguard-go' });
    const same = overlayResources('alpha', overlayFor(alpha, [bravo, alpha], 51820), 'mesh0', { init: 'none', wireguard: 'wireguard-go' });
    const after = overlayResources('alpha', overlayFor(alpha, [alpha, bravo, charlie], 51820), 'mesh0', { init: 'none', wireguard: 'wireguard-go' });
    const guardOf = (resources: ReturnType<typeof overlayResources>) => {
      const action = resources.find((resource) => resource.shape === 'action');
      return action?.shape === 'action' && 'creates' in action.guard ? action.guard.creates : undefined;
    };
    expect(guardOf(before)).toMatch(/^\/run\/mesh\/overlay-mesh0\.[0-9a-f]{16}$/);
    expect(guardOf(same)).toBe(guardOf(before));
    expect(guardOf(after)).not.toBe(guardOf(before));
  });
});
