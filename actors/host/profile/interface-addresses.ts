import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { InventoryAddress } from '../../../schema/inventory';

/** Node's `os.networkInterfaces()` shape, so tests can pin the machine's interfaces. */
export type InterfaceTable = NodeJS.Dict<NetworkInterfaceInfo[]>;

const MAX_ADDRESSES = 256;

/**
 * The addresses peers might reach this machine at: every address on every interface, less
 * loopback and link-local ones (they mean nothing off the link, and a link-local IPv6 needs a
 * zone no peer has). They are the running kernel's, of the network namespace the host runs in,
 * whatever root it manages: which of them peers can use is the controller's choice.
 */
export function interfaceAddresses(table: InterfaceTable = networkInterfaces()): InventoryAddress[] {
  const found: InventoryAddress[] = [];
  for (const name of Object.keys(table).sort()) {
    if (!/^[^\s/]{1,15}$/.test(name)) continue;
    for (const info of table[name] ?? []) {
      if (info.internal || isLinkLocal(info.address)) continue;
      found.push({ interface: name, address: info.address });
    }
  }
  return found.slice(0, MAX_ADDRESSES);
}

function isLinkLocal(address: string): boolean {
  return address.startsWith('169.254.') || /^fe[89ab][0-9a-f]:/i.test(address);
}
