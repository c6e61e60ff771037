import { MESH_HOSTS_PATH } from '../declarations/overlay-resources';

/** Where the resolver seat's holders keep the DNS server's configuration. */
export const RESOLVER_CONFIG_PATH = '/etc/mesh/dnsmasq.conf';
/** Every node's resolver configuration, once the resolver seat has a holder on the overlay. */
export const RESOLV_CONF_PATH = '/etc/resolv.conf';
/** The service a resolver holder runs the DNS server as. */
export const RESOLVER_SERVICE = 'mesh-dns-resolver';
/** The DNS server, where Debian (dnsmasq-base), Alpine and Arch (through /usr/sbin) all put it. */
export const DNSMASQ_PROGRAM = '/usr/sbin/dnsmasq';
/** glibc reads at most three nameservers (MAXNS); more would be ignored silently. */
export const MAX_NAMESERVERS = 3;

/**
 * The DNS server's configuration on a resolver holder: mesh names from the overlay's names file,
 * on the holder's overlay address alone, with no upstream server and NXDOMAIN for every other
 * name. No upstream is the point (seed 003, the musl lesson): musl asks every listed nameserver
 * at once and takes the first answer, so a public answer beside the mesh's broke mesh names.
 * `bind-dynamic` lets it start before the overlay interface has its address.
 */
export function renderResolverConfig(listenAddress: string): string {
  return [
    '# Written by the mesh controller: this machine holds the seat mesh-dns-resolver.',
    `# It answers mesh names from ${MESH_HOSTS_PATH} on its overlay address and nothing else: no`,
    '# upstream server (a public answer beside the mesh\'s breaks names where musl asks all at',
    '# once), no names from this machine\'s own /etc/hosts, and NXDOMAIN for any other name.',
    'no-resolv',
    'no-poll',
    'no-hosts',
    `addn-hosts=${MESH_HOSTS_PATH}`,
    `listen-address=${listenAddress}`,
    'bind-dynamic',
    'local=/#/',
    // No pid file: the init keeps the process (systemd's MAINPID, OpenRC's own pidfile).
    'pid-file=',
    '',
  ].join('\n');
}

/**
 * A node's resolv.conf: the resolver holders' overlay addresses, this node first when it holds
 * the seat, and no other nameserver. Short timeouts, so a holder that is down costs a second,
 * not five, before the next is asked.
 */
export function renderResolvConf(addresses: readonly string[]): string {
  const listed = addresses.slice(0, MAX_NAMESERVERS);
  const lines = [
    '# Written by the mesh controller from the seat mesh-dns-resolver: the mesh\'s resolvers, and no',
    '# other. A public resolver beside them would answer NXDOMAIN for mesh names wherever musl',
    '# asks every nameserver at once; give the resolver holders an upstream instead.',
    ...listed.map((address) => `nameserver ${address}`),
    'options timeout:1 attempts:2',
  ];
  if (addresses.length > listed.length) lines.splice(3, 0, `# ${addresses.length - listed.length} more holder(s) left out: a resolver reads at most ${MAX_NAMESERVERS}.`);
  return `${lines.join('\n')}\n`;
}

/** The systemd unit a resolver holder runs the DNS server under. */
export function renderResolverUnit(): string {
  return [
    '# Written by the mesh controller: this machine holds the seat mesh-dns-resolver.',
    '[Unit]',
    'Description=Mesh names on the overlay (seat mesh-dns-resolver)',
    'After=network.target',
    '',
    '[Service]',
    `ExecStart=${DNSMASQ_PROGRAM} --keep-in-foreground --conf-file=${RESOLVER_CONFIG_PATH}`,
    'ExecReload=/bin/kill -HUP $MAINPID',
    'Restart=on-failure',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** The OpenRC script a resolver holder runs the DNS server under. */
export function renderResolverInitScript(): string {
  return [
    '#!/sbin/openrc-run',
    '# Written by the mesh controller: this machine holds the seat mesh-dns-resolver.',
    'description="Mesh names on the overlay (seat mesh-dns-resolver)"',
    `command=${DNSMASQ_PROGRAM}`,
    `command_args="--keep-in-foreground --conf-file=${RESOLVER_CONFIG_PATH}"`,
    'command_background=true',
    `pidfile=/run/${RESOLVER_SERVICE}.pid`,
    'extra_started_commands="reload"',
    'depend() { need net; }',
    'reload() { start-stop-daemon --signal HUP --pidfile "$pidfile"; }',
    '',
  ].join('\n');
}
