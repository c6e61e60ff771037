/**
 * The overlay's address pool, as the controller configuration gives it (`10.77.0.0/16`): the
 * host addresses between the network address and the broadcast address, lowest first.
 */
export interface OverlayPool {
  /** The pool as configured. */
  readonly cidr: string;
  /** The lowest host address, as a 32-bit number. */
  readonly first: number;
  /** The highest host address, as a 32-bit number. */
  readonly last: number;
}

/** Reads a pool like `10.77.0.0/16`. Throws RangeError for anything else (config is checked earlier). */
export function overlayPool(cidr: string): OverlayPool {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(cidr);
  const prefix = match === null ? Number.NaN : Number(match[2]);
  if (match === null || !(prefix >= 1 && prefix <= 30)) throw new RangeError(`expected an IPv4 pool like "10.77.0.0/16", got ${JSON.stringify(cidr)}`);
  const size = 2 ** (32 - prefix);
  const network = addressNumber(match[1] as string) - (addressNumber(match[1] as string) % size);
  return { cidr, first: network + 1, last: network + size - 2 };
}

/**
 * The lowest host address of the pool that is not in `taken`, or undefined when every one is.
 * Addresses outside the pool in `taken` are ignored (the pool may have been changed).
 */
export function firstFreeAddress(pool: OverlayPool, taken: Iterable<string>): string | undefined {
  const used = new Set<number>();
  for (const address of taken) {
    const n = tryAddressNumber(address);
    if (n !== undefined && n >= pool.first && n <= pool.last) used.add(n);
  }
  for (let n = pool.first; n <= pool.last; n += 1) {
    if (!used.has(n)) return addressText(n);
  }
  return undefined;
}

/** True when `address` is one of the pool's host addresses. */
export function poolHolds(pool: OverlayPool, address: string): boolean {
  const n = tryAddressNumber(address);
  return n !== undefined && n >= pool.first && n <= pool.last;
}

function addressNumber(address: string): number {
  const n = tryAddressNumber(address);
  if (n === undefined) throw new RangeError(`expected a dotted IPv4 address, got ${JSON.stringify(address)}`);
  return n;
}

function tryAddressNumber(address: string): number | undefined {
  const parts = address.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((sum, part) => sum * 256 + Number(part), 0);
}

function addressText(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}
