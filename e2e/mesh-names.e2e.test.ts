import { existsSync, promises as fs } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { SeatChanged } from '../actors/controller/seats/change-seat';
import { MeshRig } from './mesh-rig';
import { DNS_QUERY, dnsAnswerOf, NXDOMAIN, type DnsAnswer } from './dns-query';
import { namespaceSupport, NetnsLab, type LabResult } from './netns-lab';
import { jsonOf, succeeded } from './run-cli';
import { done, notYet, until } from './until';

// Mesh names on real hosts: three machines in network namespaces (the overlay test's lab and
// rig), real broker, controller and hosts, the overlay up with wireguard-go. Two of them are
// made holders of the resolver seat with `mesh-control seat mesh-dns-resolver --add`; each
// runs the DNS server with the configuration its host applied; the third resolves every node
// by name through the resolv.conf its host applied, over the overlay. With one holder stopped
// names still resolve, and so they do when its machine goes silent; a name that is not a node
// gets NXDOMAIN from both, never a public answer.
//
// Two stand-ins, as in the overlay test: no init runs here, so the test brings mesh0 up with
// `wg-quick up` and starts dnsmasq itself, with the declared configuration unchanged, where a
// systemd or OpenRC machine would run the declared service. The applied files live in each
// host's root, not in the machine's /etc: dnsmasq runs in a mount namespace where the root's
// /etc is laid over the machine's (read-only overlayfs), and the resolver is given the root's
// resolv.conf bound over /etc/resolv.conf for the resolving process alone.

const support = namespaceSupport();
const dnsmasq = '/usr/sbin/dnsmasq';
const skipped = !support.ok
  ? `this machine cannot make network namespaces for it: ${support.why}`
  : existsSync(dnsmasq) ? undefined : `${dnsmasq} is not installed (Debian's dnsmasq-base)`;
if (skipped !== undefined) {
  // Said plainly, and counted as skipped: never a pass.
  console.warn(`mesh-names e2e skipped: ${skipped}`);
}
const maybe = skipped === undefined ? describe : describe.skip;
const NAMES = ['a', 'b', 'c'] as const;
const HOLDERS = ['a', 'b'] as const;

maybe('mesh names through the resolver seat, between three machines in network namespaces', () => {
  let parent: string;
  let lab: NetnsLab;
  let rig: MeshRig;
  const servers = new Map<string, ChildProcess>();
  const overlay = new Map<string, string>();

  beforeAll(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-names-'));
    lab = new NetnsLab();
    await lab.create();
    rig = new MeshRig({ dir: parent, hosts: [...NAMES], brokerHost: lab.gateway, hostPrefix: (name) => lab.enter(name) });
    for (const [index, name] of NAMES.entries()) {
      const root = rig.hostRoot(name);
      await fs.mkdir(path.join(root, 'usr', 'bin'), { recursive: true });
      await fs.symlink('/usr/bin/wireguard-go', path.join(root, 'usr', 'bin', 'wireguard-go'));
      await lab.addMachine(name, index + 1);
    }
    await rig.start();
    for (const name of NAMES) await rig.enrol(name, (await rig.issueToken({ new: true })).token);
    for (const node of await rig.nodes()) if (node.address !== null) overlay.set(node.name, node.address);
    for (const name of NAMES) {
      await until(`${name}'s applied mesh0.conf to name both peers with endpoints`, async () => {
        const config = await readRoot(name, 'etc/wireguard/mesh0.conf');
        return [...config.matchAll(/^Endpoint = /gm)].length === NAMES.length - 1 ? done(config) : notYet(config);
      }, { timeoutMs: 60_000, intervalMs: 200 });
      // The stand-in for the init starting wg-quick@mesh0 (see the top of this file).
      const up = await lab.run(name, ['wg-quick', 'up', path.join(rig.hostRoot(name), 'etc', 'wireguard', 'mesh0.conf')]);
      expect([up.code, up.stderr]).toEqual([0, expect.stringContaining('wireguard-go mesh0')]);
    }
  }, 240_000);

  afterAll(async () => {
    for (const server of servers.values()) server.kill('SIGKILL');
    await rig?.stop();
    await lab?.destroy();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  const readRoot = (name: string, file: string): Promise<string> => fs.readFile(path.join(rig.hostRoot(name), file), 'utf8').catch(() => '');
  const nameservers = (text: string): string[] => [...text.matchAll(/^nameserver (\S+)$/gm)].map((match) => match[1] as string);

  /** One A query from machine `from` straight to `server`, over whatever route it has there. */
  async function ask(from: string, server: string, name: string): Promise<DnsAnswer> {
    return dnsAnswerOf((await lab.run(from, [process.execPath, '-e', DNS_QUERY, server, name])).stdout);
  }

  /** `getent ahostsv4 NAME` on machine `from`, its resolver reading the resolv.conf its host applied. */
  function resolveThroughDeclared(from: string, name: string): Promise<LabResult> {
    return lab.run(from, [
      'unshare', '--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$1" /etc/resolv.conf && exec getent ahostsv4 "$2"', 'resolve',
      path.join(rig.hostRoot(from), 'etc', 'resolv.conf'), name,
    ]);
  }

  /** Starts the DNS server on a holder with its applied configuration, seen at /etc as the declaration names it. */
  async function startResolver(name: string): Promise<void> {
    const child = lab.start(name, [
      'unshare', '--mount', '--propagation', 'private', 'sh', '-c',
      'mount -t overlay mesh-etc -o "lowerdir=$1/etc:/etc" /etc && exec "$2" --keep-in-foreground --conf-file=/etc/mesh/dnsmasq.conf --log-facility=-', 'resolver',
      rig.hostRoot(name), dnsmasq,
    ]);
    let said = '';
    child.stderr?.on('data', (chunk: Buffer) => { said += chunk.toString(); });
    servers.set(name, child);
    const address = overlay.get(name) as string;
    await until(`the resolver on ${name} to answer at ${address}`, async () => {
      if (child.exitCode !== null) throw new Error(`dnsmasq on ${name} ended (${child.exitCode}): ${said}`);
      const answer = await ask(name, address, name);
      return 'rcode' in answer ? done(answer) : notYet(`${JSON.stringify(answer)} ${said}`);
    }, { timeoutMs: 30_000, intervalMs: 300 });
  }

  test('two holders of the resolver seat are declared the DNS server; every node lists them and nothing else', async () => {
    for (const holder of HOLDERS) {
      const changed = jsonOf<SeatChanged>(succeeded(await rig.control(['seat', 'mesh-dns-resolver', '--add', holder, '--json'])));
      expect(changed.changed).toEqual([`added node ${holder}`]);
    }
    const expected = (name: string): string[] => (name === 'b' ? ['b', 'a'] : ['a', 'b']).map((holder) => overlay.get(holder) as string);
    for (const name of NAMES) {
      await until(`${name}'s applied resolv.conf to list both holders`, async () => {
        const text = await readRoot(name, 'etc/resolv.conf');
        return JSON.stringify(nameservers(text)) === JSON.stringify(expected(name)) ? done(text) : notYet(text);
      }, { timeoutMs: 60_000, intervalMs: 200 });
    }
    for (const holder of HOLDERS) {
      const config = await until(`${holder}'s applied resolver configuration`, async () => {
        const text = await readRoot(holder, 'etc/mesh/dnsmasq.conf');
        return text.includes(`listen-address=${overlay.get(holder)}`) ? done(text) : notYet(text);
      }, { timeoutMs: 60_000, intervalMs: 200 });
      expect(config).toMatch(/^no-resolv$/m);
      expect(config).not.toMatch(/^server=/m);
    }
    expect(await readRoot('c', 'etc/mesh/dnsmasq.conf')).toBe('');
    const listed = jsonOf<{ seats: Array<{ seat: string; holders: Array<{ node: string }> }> }>(succeeded(await rig.control(['seats', '--json'])));
    expect(listed.seats.find((seat) => seat.seat === 'mesh-dns-resolver')?.holders.map((holder) => holder.node)).toEqual(['a', 'b']);
  }, 180_000);

  test('from the third machine every node resolves by name through the declared resolv.conf, over the overlay', async () => {
    for (const holder of HOLDERS) await startResolver(holder);
    for (const holder of HOLDERS) {
      const server = overlay.get(holder) as string;
      expect(server).toMatch(/^10\.77\./);
      for (const name of NAMES) expect(await ask('c', server, name)).toEqual({ rcode: 0, addresses: [overlay.get(name)] });
      // It answers on the overlay alone: not on the machine's underlay address.
      expect(await ask('c', lab.machine(holder).address, 'a')).not.toHaveProperty('rcode');
    }
    for (const name of NAMES) {
      const resolved = await timed(() => resolveThroughDeclared('c', name));
      expect([resolved.code, resolved.stdout.split(/\s+/)[0]]).toEqual([0, overlay.get(name)]);
    }
    console.info(`resolving through the declared resolv.conf from c, both holders up: ${took.splice(0).join(', ')} ms`);
  }, 120_000);

  test('a name that is not a node is NXDOMAIN from both holders, never a public answer', async () => {
    for (const holder of HOLDERS) {
      const server = overlay.get(holder) as string;
      for (const name of ['example.com', 'deb.debian.org', 'not-a-node']) expect(await ask('c', server, name)).toEqual({ rcode: NXDOMAIN, addresses: [] });
    }
    // getent: 2 is "not found", which is what NXDOMAIN from every nameserver gives.
    expect((await resolveThroughDeclared('c', 'example.com')).code).toBe(2);
  }, 60_000);

  test('with one holder stopped, names still resolve through the other', async () => {
    const stopped = servers.get('a') as ChildProcess;
    stopped.kill('SIGTERM');
    await until('the resolver on a to stop', () => (stopped.exitCode !== null || stopped.signalCode !== null ? done(true) : notYet('running')), { timeoutMs: 10_000, intervalMs: 100 });
    expect(await ask('c', overlay.get('a') as string, 'b')).not.toHaveProperty('rcode');
    for (const name of NAMES) {
      const resolved = await timed(() => resolveThroughDeclared('c', name));
      expect([resolved.code, resolved.stdout.split(/\s+/)[0]]).toEqual([0, overlay.get(name)]);
    }
    expect(await ask('c', overlay.get('b') as string, 'example.com')).toEqual({ rcode: NXDOMAIN, addresses: [] });
    console.info(`resolving through the declared resolv.conf from c, first holder's server stopped: ${took.splice(0).join(', ')} ms`);
  }, 60_000);

  test('with the first holder\'s machine gone silent, names resolve through the other after the declared timeout', async () => {
    // No answer at all, not even "port unreachable": as from a machine that is off.
    const down = await lab.run('a', ['ip', 'link', 'set', 'mesh0', 'down']);
    expect(down.code).toBe(0);
    expect(await ask('c', overlay.get('a') as string, 'b')).toEqual({ timeout: true });
    for (const name of NAMES) {
      const resolved = await timed(() => resolveThroughDeclared('c', name));
      expect([resolved.code, resolved.stdout.split(/\s+/)[0]]).toEqual([0, overlay.get(name)]);
    }
    console.info(`resolving through the declared resolv.conf from c, first holder's machine silent: ${took.splice(0).join(', ')} ms`);
  }, 60_000);

  // How long each resolution took, said (never asserted) for the report.
  const took: number[] = [];
  async function timed<T>(work: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    try {
      return await work();
    } finally {
      took.push(Math.round(Number(process.hrtime.bigint() - started) / 1e6));
    }
  }
});
