// The demo's overlay: where this machine allows it, each demo machine runs in a network
// namespace of its own (a veth pair to one bridge, as e2e/overlay.e2e.test.ts does), so the
// WireGuard configuration the controller composed for it can be brought up for real with
// wireguard-go and a packet carried over it. Where it does not, one line says which check failed.
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { MeshRig } from '../e2e/mesh-rig';
import { namespaceSupport, NetnsLab } from '../e2e/netns-lab';
import { done, notYet, until } from '../e2e/until';

/** Whether the demo can bring the tunnels up here, and why not when it cannot. */
export type OverlaySupport = { ok: true } | { ok: false; why: string };

/**
 * The checks, in the order a person would fix them: asked not to, root (namespaces and
 * interfaces need it), then what namespaceSupport checks (`ip netns add` works; wg, wg-quick,
 * wireguard-go, nsenter and unshare are installed), then ping.
 */
export function overlaySupport(options: { skip: boolean }): OverlaySupport {
  if (options.skip) return { ok: false, why: '--no-overlay was given' };
  if (process.getuid?.() !== 0) return { ok: false, why: 'not running as root (network namespaces and WireGuard interfaces need it)' };
  const namespaces = namespaceSupport();
  if (!namespaces.ok) return namespaces;
  if (spawnSync('sh', ['-c', 'command -v ping']).status !== 0) return { ok: false, why: 'ping is missing (install iputils-ping)' };
  return { ok: true };
}

/**
 * Makes the lab (the bridge, and a namespace per machine), and gives each machine's root the
 * wireguard-go this machine has, so its host's profile says `wireguard-go` and the controller
 * composes the service and sync action for it. Nothing runs in the namespaces yet.
 */
export async function makeDemoLab(names: readonly string[], rootOf: (name: string) => string): Promise<NetnsLab> {
  const lab = new NetnsLab();
  try {
    await lab.create();
    const wireguardGo = spawnSync('sh', ['-c', 'command -v wireguard-go'], { encoding: 'utf8' }).stdout.trim();
    for (const [index, name] of names.entries()) {
      const bin = path.join(rootOf(name), 'usr', 'bin');
      await fs.mkdir(bin, { recursive: true });
      await fs.symlink(wireguardGo, path.join(bin, 'wireguard-go'));
      await lab.addMachine(name, index + 1);
    }
    return lab;
  } catch (error) {
    await lab.destroy();
    throw error;
  }
}

/**
 * Brings each machine's mesh0 up from the file its host applied (`wg-quick up`, as the declared
 * wg-quick service would on a machine with an init; wg-quick starts wireguard-go), then has each
 * machine ping the next over the overlay, and returns `wg show mesh0` of the first: its peers,
 * their endpoints and the handshakes just made. Throws, saying what failed, when a tunnel does
 * not come up or carries no packet.
 */
export async function showTunnels(rig: MeshRig, lab: NetnsLab, names: readonly string[], say: (line: string) => void): Promise<string> {
  const addresses = new Map((await rig.nodes()).map((node) => [node.name, node.address]));
  for (const name of names) {
    const config = path.join(rig.hostRoot(name), 'etc', 'wireguard', 'mesh0.conf');
    const up = await lab.run(name, ['wg-quick', 'up', config]);
    if (up.code !== 0) throw new Error(`wg-quick up ${config} failed on machine ${name} (status ${up.code}): ${up.stderr.trim()}`);
    say(`machine ${name}: mesh0 up at ${addresses.get(name) ?? '?'} (wg-quick up, with wireguard-go, in its own network namespace at ${lab.machine(name).address})`);
  }
  for (const [index, from] of names.entries()) {
    const to = names[(index + 1) % names.length] as string;
    const address = addresses.get(to);
    if (address === null || address === undefined) throw new Error(`node ${to} has no overlay address`);
    // The first packet waits for the handshake; a few tries cover it.
    const answer = await until(`machine ${from} to ping ${to} at ${address} over the overlay`, async () => {
      const ping = await lab.run(from, ['ping', '-c', '1', '-W', '2', address]);
      return ping.code === 0 ? done(ping.stdout) : notYet(`${ping.stdout}${ping.stderr}`);
    }, { timeoutMs: 15_000, intervalMs: 200 });
    const time = /time=([\d.]+ ms)/.exec(answer)?.[1];
    say(`machine ${from} reached ${to} at ${address} over the overlay (ping${time === undefined ? '' : `: ${time}`})`);
  }
  const show = await lab.run(names[0] as string, ['wg', 'show', 'mesh0']);
  return show.stdout.trimEnd();
}
