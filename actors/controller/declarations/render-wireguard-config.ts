import type { Overlay } from '../../../schema/overlay';

/**
 * Where a host in the default state directory keeps the node's WireGuard private key. The key
 * is made on the machine at enrolment and never leaves it, so the configuration the controller
 * writes cannot hold it: `PostUp` reads it from the path the host said at enrolment (its
 * profile's `wireguard_key_path`), or from here for a host too old to say.
 */
export const WIREGUARD_PRIVATE_KEY_PATH = '/var/lib/mesh-host/wireguard.key';

/**
 * The node's `wg-quick` configuration: the interface with its overlay address and listen
 * port, the private key set from the host's own file (at `keyPath`) after the interface is up,
 * and one `[Peer]` per other node, routing that node's address.
 */
export function renderWireguardConfig(nodeName: string, overlay: Overlay, keyPath: string = WIREGUARD_PRIVATE_KEY_PATH): string {
  const lines = [
    `# The mesh overlay of node ${nodeName}, written by the mesh controller.`,
    '# Edits here are replaced at the next reconcile.',
    // Named so a re-keyed node's file changes too, and its running interface takes the new key.
    `# Its public key is ${overlay.public_key}.`,
    '[Interface]',
    `Address = ${overlay.address}`,
    ...(overlay.listen_port === undefined ? [] : [`ListenPort = ${overlay.listen_port}`]),
    `PostUp = wg set %i private-key ${shellWord(keyPath)}`,
  ];
  for (const peer of overlay.peers) {
    lines.push(
      '',
      `# ${peer.name}`,
      '[Peer]',
      `PublicKey = ${peer.public_key}`,
      `AllowedIPs = ${peer.allowed_ips.join(', ')}`,
      ...(peer.endpoint === undefined ? [] : [`Endpoint = ${peer.endpoint}`]),
      ...(peer.persistent_keepalive === undefined ? [] : [`PersistentKeepalive = ${peer.persistent_keepalive}`]),
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `path` as one word for the shell wg-quick runs PostUp in: as it is when plain, else in single
 * quotes (the profile's contract keeps quotes, "#", "%" and line breaks out of it), so a state
 * directory under a folder with a space still names its key.
 */
export function shellWord(path: string): string {
  return /^[A-Za-z0-9._+/-]+$/.test(path) ? path : `'${path}'`;
}
