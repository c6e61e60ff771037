import { promises as fs } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import type { ControllerConfig } from '../../../schema/controller-config';
import { parseBrokerAddress } from '../../shared/bus';
import { decodeBase64, generateSigningKeyPair, nkeyPublicOf, publicKeyOf, writeKeyFile } from '../../shared/crypto';
import { brokerConfigFor, writeBrokerConfig } from '../broker/broker-config';
import { brokerPaths } from '../broker/broker-paths';
import { generateTlsMaterial } from '../broker/tls-material';
import { isPathTaken } from '../broker/is-path-taken';
import { openStore } from '../store/open-store';
import { writeBrokerUserList, brokerUserListFile } from '../serve/broker-user-list';
import { InitOptionInvalid, MeshAlreadyInitialised, MeshDirectoryNotEmpty } from './config-errors';
import { formatListenAddress, parseListenAddress, type ListenAddress } from './listen-address';
import { meshDirLayout, MESH_FILE_NAME } from './mesh-dir-layout';
import { shellWord } from './shell-word';
import { writeControllerConfig } from './write-controller-config';

/** What `mesh-control init` was asked for. */
export interface InitMeshOptions {
  dir: string;
  /** How hosts and the CLI reach the broker: `tls://HOST:PORT`. Default tls://127.0.0.1:4222. */
  brokerUrl?: string;
  /** Where the broker listens, `HOST:PORT`. Default: the broker URL's port, on 127.0.0.1 when the URL is local, else every address. */
  listen?: string;
  /** A PostgreSQL URL; the embedded store in `<dir>/store` unless given. */
  database?: string;
  /** The overlay's address pool. Default 10.77.0.0/16. */
  overlayCidr?: string;
  /** The migrations folder; the project's own unless given (tests). */
  migrationsDir?: string;
}

/** A file `init` made, and its mode. */
export interface MadeFile {
  path: string;
  mode: string;
  what: string;
}

/** What `init` made, for the text and `--json` it prints. */
export interface InitMeshResult {
  dir: string;
  mesh_file: string;
  broker: { url: string; listen: string; fingerprint: string; config_file: string; subject_alt_names: string[] };
  controller_public_key: string;
  store: { kind: 'pglite'; dir: string } | { kind: 'postgres' };
  migrations_applied: string[];
  files: MadeFile[];
  /** The commands to run next, in order. */
  next: string[];
  /** The broker's plain nats-server command line, for a service manager. */
  broker_command: string;
}

/** The broker address a mesh gets unless `--broker-url` says otherwise: this machine only. */
export const DEFAULT_BROKER_URL = 'tls://127.0.0.1:4222';
/** The overlay's address pool unless `--overlay-cidr` says otherwise. */
export const DEFAULT_OVERLAY_CIDR = '10.77.0.0/16';
const OVERLAY_PORT = 51820;
const OVERLAY_INTERFACE = 'mesh0';
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * Makes a new mesh in `dir`: the controller's signing key, the controller's and the operator's
 * broker keys (each 0600), the broker's TLS key and certificate (named for the broker URL's
 * host, localhost and 127.0.0.1), the nats-server configuration with its JetStream store under
 * `<dir>/broker`, the broker's user list (controller and operator), the store with every
 * migration applied, and last mesh.json, whose presence marks the mesh as made.
 *
 * Every option is checked before anything is written. A directory that already has mesh.json
 * is refused (MeshAlreadyInitialised), and so is one with any other mesh file in it
 * (MeshDirectoryNotEmpty): keys nodes may trust are never replaced. When a step fails, what
 * this call made is removed again, so the command can simply be run again.
 */
export async function initMesh(options: InitMeshOptions): Promise<InitMeshResult> {
  const layout = meshDirLayout(options.dir);
  const broker = readBrokerUrl(options.brokerUrl ?? DEFAULT_BROKER_URL);
  const listen = options.listen === undefined ? defaultListen(broker) : readListen(options.listen);
  const overlayCidr = readOverlayCidr(options.overlayCidr ?? DEFAULT_OVERLAY_CIDR);
  if (options.database !== undefined) readDatabaseUrl(options.database);
  await refuseExistingMesh(layout.dir);

  const made: string[] = [];
  const createdDir = !(await isPathTaken(layout.dir));
  try {
    await fs.mkdir(layout.dir, { recursive: true, mode: 0o700 });
    await fs.mkdir(layout.keysDir, { mode: 0o700 });
    made.push(layout.keysDir);
    const signing = generateSigningKeyPair();
    await writeKeyFile(layout.signingKeyFile, decodeBase64(signing.secret_key) as Uint8Array);
    const controllerNkey = await newNkeyFile(layout.controllerNkeyFile);
    const operatorNkey = await newNkeyFile(layout.operatorNkeyFile);

    const paths = brokerPaths(layout.brokerDir);
    made.push(paths.dir);
    const subjectAltNames = [...new Set([broker.host, 'localhost', '127.0.0.1'])];
    const tls = await generateTlsMaterial({ keyFile: paths.keyFile, certFile: paths.certFile, subjectAltNames });
    await writeBrokerConfig(paths.configFile, brokerConfigFor(paths, { host: listen.host, port: listen.port }));
    await writeBrokerUserList(paths.dir, [
      { role: 'controller', nkey: controllerNkey },
      { role: 'operator', nkey: operatorNkey },
    ]);

    let migrations: string[] = [];
    if (options.database === undefined) made.push(layout.storeDir, `${layout.storeDir}.lock`);
    const store = await openStore(options.database === undefined ? { dir: layout.dir } : { url: options.database }, {
      ...(options.migrationsDir === undefined ? {} : { migrationsDir: options.migrationsDir }),
      onMigrated: (result) => {
        migrations = result.applied;
      },
    });
    await store.close();

    const config: ControllerConfig = {
      format: 1,
      broker: { url: broker.url, fingerprint: tls.fingerprint, cert_file: paths.certFile, config_file: paths.configFile, dir: paths.dir },
      controller: { public_key: signing.public_key, signing_key_file: layout.signingKeyFile, nkey_seed_file: layout.controllerNkeyFile },
      operator: { nkey_seed_file: layout.operatorNkeyFile },
      store: options.database === undefined ? { kind: 'pglite', dir: layout.storeDir } : { kind: 'postgres', url: options.database },
      overlay: { cidr: overlayCidr, listen_port: OVERLAY_PORT, interface: OVERLAY_INTERFACE },
    };
    made.push(layout.meshFile);
    const mesh = await writeControllerConfig(layout.dir, config);

    const dir = shellWord(layout.dir);
    return {
      dir: layout.dir,
      mesh_file: mesh.file,
      broker: { url: broker.url, listen: formatListenAddress(listen), fingerprint: tls.fingerprint, config_file: paths.configFile, subject_alt_names: tls.subjectAltNames },
      controller_public_key: signing.public_key,
      store: options.database === undefined ? { kind: 'pglite', dir: layout.storeDir } : { kind: 'postgres' },
      migrations_applied: migrations,
      files: [
        { path: layout.signingKeyFile, mode: '0600', what: 'the controller\'s signing key: every declaration is signed with it' },
        { path: layout.controllerNkeyFile, mode: '0600', what: 'the controller\'s broker key' },
        { path: layout.operatorNkeyFile, mode: '0600', what: 'the operator\'s broker key: the CLI calls the controller with it' },
        { path: paths.keyFile, mode: '0600', what: 'the broker\'s TLS key' },
        { path: paths.certFile, mode: '0644', what: 'the broker\'s certificate: tokens carry its fingerprint' },
        { path: paths.configFile, mode: '0644', what: 'the nats-server configuration (TLS, JetStream)' },
        { path: paths.authFile, mode: '0600', what: 'the broker\'s users, rewritten as nodes come and go' },
        { path: brokerUserListFile(paths.dir), mode: '0600', what: 'the same users as data, for the controller' },
        ...(options.database === undefined ? [{ path: layout.storeDir, mode: '0700', what: 'the embedded store (PGlite)' }] : []),
        { path: mesh.file, mode: mesh.mode.toString(8).padStart(4, '0'), what: 'the mesh: where everything above is' },
      ],
      next: [`mesh-control broker --dir ${dir}`, `mesh-control serve --dir ${dir}`],
      broker_command: `nats-server -c ${shellWord(paths.configFile)}`,
    };
  } catch (error) {
    // Only what this call made: the directory held no mesh file before it started.
    for (const file of made.reverse()) await fs.rm(file, { recursive: true, force: true });
    if (createdDir) await fs.rm(layout.dir, { recursive: true, force: true });
    throw error;
  }
}

/** A broker key file: a fresh Ed25519 seed, 0600. Returns the user's public nkey. */
async function newNkeyFile(file: string): Promise<string> {
  const pair = generateSigningKeyPair();
  await writeKeyFile(file, decodeBase64(pair.secret_key) as Uint8Array);
  return nkeyPublicOf(publicKeyOf(pair.secret_key));
}

async function refuseExistingMesh(dir: string): Promise<void> {
  if (await isPathTaken(path.join(dir, MESH_FILE_NAME))) throw new MeshAlreadyInitialised(dir);
  const layout = meshDirLayout(dir);
  const meshFiles = [layout.keysDir, layout.brokerDir, layout.storeDir, `${layout.storeDir}.lock`];
  const found: string[] = [];
  for (const file of meshFiles) if (await isPathTaken(file)) found.push(path.basename(file));
  if (found.length > 0) throw new MeshDirectoryNotEmpty(dir, found);
}

function readBrokerUrl(text: string): { url: string; host: string; port: number } {
  const next = 'give the address hosts will dial, like --broker-url tls://mesh.example.net:4222';
  let address;
  try {
    address = parseBrokerAddress(text);
  } catch {
    throw new InitOptionInvalid('--broker-url', text, 'expected tls://HOST:PORT with no credentials or path', next);
  }
  if (!text.startsWith('tls://')) throw new InitOptionInvalid('--broker-url', text, 'the broker is always reached over TLS: the address starts with tls://', next);
  const host = isIP(address.host) === 6 ? `[${address.host}]` : address.host;
  return { url: `tls://${host}:${address.port}`, host: address.host, port: address.port };
}

function defaultListen(broker: { host: string; port: number }): ListenAddress {
  return { host: LOCAL_HOSTS.has(broker.host) ? '127.0.0.1' : '0.0.0.0', port: broker.port };
}

function readListen(text: string): ListenAddress {
  const address = parseListenAddress(text);
  if (address === undefined) {
    throw new InitOptionInvalid('--listen', text, 'expected HOST:PORT', 'give the address and port the broker listens on, like --listen 0.0.0.0:4222 or --listen [::]:4222');
  }
  return address;
}

function readOverlayCidr(text: string): string {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  const octets = match === null ? [] : match.slice(1, 5).map(Number);
  const prefix = match === null ? NaN : Number(match[5]);
  const next = 'give a private IPv4 pool of /8 to /30, like --overlay-cidr 10.77.0.0/16';
  if (match === null || octets.some((octet) => octet > 255) || !(prefix >= 8 && prefix <= 30)) {
    throw new InitOptionInvalid('--overlay-cidr', text, 'expected an IPv4 pool like 10.77.0.0/16 (prefix 8 to 30)', next);
  }
  const address = octets.reduce((value, octet) => value * 256 + octet, 0);
  if (address % 2 ** (32 - prefix) !== 0) {
    throw new InitOptionInvalid('--overlay-cidr', text, 'the address has bits set beyond the prefix; give the pool\'s first address', next);
  }
  return text;
}

function readDatabaseUrl(text: string): void {
  if (!/^postgres(?:ql)?:\/\//.test(text)) {
    throw new InitOptionInvalid('--database', text.replace(/:[^:@/]*@/, ':…@'), 'expected a postgres:// URL', 'give the database like --database postgres://mesh@db.example/mesh, or leave it out for the embedded store');
  }
}
