import { promises as fs } from 'node:fs';
import path from 'node:path';

/** One socket a process holds, as the kernel lists it. */
export interface ProcessSocket {
  inode: string;
  table: 'tcp' | 'tcp6' | 'udp' | 'udp6' | 'unix';
  /** TCP state name (`LISTEN`, `ESTABLISHED`, …); for UDP and unix sockets, the kernel's code. */
  state: string;
  localPort?: number;
  remotePort?: number;
  /** Accepts connections or datagrams from anyone: a TCP listener, a bound unconnected UDP socket, a unix listener. */
  listening: boolean;
}

const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED', '02': 'SYN_SENT', '03': 'SYN_RECV', '04': 'FIN_WAIT1', '05': 'FIN_WAIT2', '06': 'TIME_WAIT',
  '07': 'CLOSE', '08': 'CLOSE_WAIT', '09': 'LAST_ACK', '0A': 'LISTEN', '0B': 'CLOSING',
};
// __SO_ACCEPTCON in /proc/net/unix's Flags column: the socket is listening.
const UNIX_ACCEPTING = 0x10000;

/**
 * The sockets process `pid` holds: its descriptors that are sockets (/proc/<pid>/fd), found by
 * inode in the kernel's tables for its network namespace (/proc/<pid>/net/tcp, tcp6, udp, udp6,
 * unix). Read from the kernel, not from what the program says about itself.
 */
export async function socketsOf(pid: number): Promise<ProcessSocket[]> {
  const fdDir = `/proc/${pid}/fd`;
  const inodes = new Set<string>();
  for (const fd of await fs.readdir(fdDir)) {
    const target = await fs.readlink(path.join(fdDir, fd)).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match !== null) inodes.add(match[1] as string);
  }
  const sockets: ProcessSocket[] = [];
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6'] as const) {
    for (const line of (await fs.readFile(`/proc/${pid}/net/${table}`, 'utf8')).split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const inode = fields[9];
      if (inode === undefined || !inodes.has(inode)) continue;
      const local = portOf(fields[1]);
      const remote = portOf(fields[2]);
      const code = fields[3] ?? '';
      const state = table.startsWith('tcp') ? TCP_STATES[code] ?? code : code;
      const listening = table.startsWith('tcp') ? state === 'LISTEN' : remote === 0;
      sockets.push({ inode, table, state, localPort: local, remotePort: remote, listening });
    }
  }
  for (const line of (await fs.readFile(`/proc/${pid}/net/unix`, 'utf8')).split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const inode = fields[6];
    if (inode === undefined || !inodes.has(inode)) continue;
    const flags = Number.parseInt(fields[3] ?? '0', 16);
    sockets.push({ inode, table: 'unix', state: fields[5] ?? '', listening: (flags & UNIX_ACCEPTING) !== 0 });
  }
  return sockets;
}

/** The sockets of `pid` that accept anything from outside. */
export async function listeningSockets(pid: number): Promise<ProcessSocket[]> {
  return (await socketsOf(pid)).filter((socket) => socket.listening);
}

function portOf(address: string | undefined): number | undefined {
  const port = address?.split(':')[1];
  return port === undefined ? undefined : Number.parseInt(port, 16);
}
