import { generateKeyPair, X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { certificateFingerprint } from '../../shared/crypto';
import { type CommandRunner, ProcessRunner, describeFailure, succeeded } from '../../shared/process/command-runner';
import { writeFileAtomic } from '../../shared/fs/atomic-write';
import { SubjectAltNameInvalid, TlsMaterialExists, TlsMaterialFailed, TlsMaterialMissing } from './broker-errors';
import { isPathTaken } from './is-path-taken';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Ten years: a broker certificate is pinned by fingerprint, so renewing it means new tokens. */
export const BROKER_CERTIFICATE_DAYS = 3650;

/** The broker's TLS key and certificate, and what a token needs of them. */
export interface TlsMaterial {
  keyFile: string;
  certFile: string;
  /** The certificate, PEM. Self-signed, so it is also the CA a client trusts. */
  certPem: string;
  /** SHA-256 of the certificate's DER bytes, lower-case hex: what tokens carry. */
  fingerprint: string;
  /** The names and addresses the certificate is valid for. */
  subjectAltNames: string[];
  /** When it stops being valid, ISO-8601. */
  notAfter: string;
}

/** How to make the broker's TLS material. */
export interface GenerateTlsMaterialOptions {
  keyFile: string;
  certFile: string;
  /** Host names and IP addresses; defaults to defaultSubjectAltNames(). */
  subjectAltNames?: readonly string[];
  days?: number;
  /**
   * Also for client authentication: a cluster's route certificate is presented by the server
   * that dials a route as much as by the one that accepts it, and nats-server checks both.
   */
  clientAuth?: boolean;
  /** The certificate's common name (default `novox-mesh broker`). */
  commonName?: string;
  runner?: CommandRunner;
  /** The openssl program; `openssl` on the PATH unless given. */
  openssl?: string;
}

/**
 * The names a broker certificate carries unless told otherwise: `localhost`, `127.0.0.1` and
 * this machine's host name (when it is a usable DNS name), so a node on the same machine and
 * one that reaches it by name both verify it.
 */
export function defaultSubjectAltNames(hostname: string = os.hostname()): string[] {
  const names = ['localhost', '127.0.0.1'];
  if (isDnsName(hostname) && !names.includes(hostname)) names.push(hostname);
  return names;
}

/**
 * Makes the broker's key (ECDSA P-256, which nats-server and Node's TLS both accept everywhere
 * we ship) and a self-signed certificate for it, valid ten years for the given names. The key is
 * written 0600 before openssl sees it; the certificate 0644. Refuses to replace existing
 * material (TlsMaterialExists): nodes pin the certificate.
 */
export async function generateTlsMaterial(options: GenerateTlsMaterialOptions): Promise<TlsMaterial> {
  const keyFile = path.resolve(options.keyFile);
  const certFile = path.resolve(options.certFile);
  const names = [...new Set(options.subjectAltNames ?? defaultSubjectAltNames())];
  if (names.length === 0) throw new SubjectAltNameInvalid('');
  for (const name of names) if (isIP(name) === 0 && !isDnsName(name)) throw new SubjectAltNameInvalid(name);
  for (const file of [keyFile, certFile]) if (await isPathTaken(file)) throw new TlsMaterialExists(file);

  const { privateKey } = await generateKeyPairAsync('ec', {
    namedCurve: 'prime256v1',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  await fs.mkdir(path.dirname(keyFile), { recursive: true, mode: 0o700 });
  await fs.mkdir(path.dirname(certFile), { recursive: true, mode: 0o755 });
  await writeFileAtomic(keyFile, privateKey, 0o600);

  let certPem: string;
  try {
    const usage = { clientAuth: options.clientAuth === true, commonName: options.commonName ?? 'novox-mesh broker' };
    if (!/^[A-Za-z0-9 _.-]{1,64}$/.test(usage.commonName)) throw new SubjectAltNameInvalid(usage.commonName);
    certPem = await selfSign(keyFile, names, options.days ?? BROKER_CERTIFICATE_DAYS, usage, options.runner ?? new ProcessRunner(), options.openssl ?? 'openssl');
  } catch (error) {
    // A key without its certificate would make the next attempt refuse with TlsMaterialExists.
    await fs.rm(keyFile, { force: true });
    throw error;
  }
  await writeFileAtomic(certFile, certPem, 0o644);
  return materialOf(keyFile, certFile, certPem);
}

/** The broker's existing certificate and its fingerprint, for `token issue` and for clients. */
export async function readTlsMaterial(keyFile: string, certFile: string): Promise<TlsMaterial> {
  let certPem: string;
  try {
    certPem = await fs.readFile(certFile, 'utf8');
  } catch (error) {
    throw new TlsMaterialMissing(certFile, error);
  }
  return materialOf(path.resolve(keyFile), path.resolve(certFile), certPem);
}

function materialOf(keyFile: string, certFile: string, certPem: string): TlsMaterial {
  // First: it throws CertificateUnreadable, which says what to do about a damaged file.
  const fingerprint = certificateFingerprint(certPem);
  const certificate = new X509Certificate(certPem);
  return {
    keyFile,
    certFile,
    certPem,
    fingerprint,
    subjectAltNames: (certificate.subjectAltName ?? '')
      .split(', ')
      .filter((entry) => entry !== '')
      .map((entry) => entry.replace(/^(DNS|IP Address):/, '')),
    notAfter: new Date(certificate.validTo).toISOString(),
  };
}

async function selfSign(keyFile: string, names: readonly string[], days: number, usage: CertificateUsage, runner: CommandRunner, openssl: string): Promise<string> {
  // Our own openssl configuration, so the distribution's openssl.cnf (which differs between
  // Debian, Alpine and Arch) adds nothing to the certificate.
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-broker-cert-'));
  try {
    const config = path.join(scratch, 'req.cnf');
    await fs.writeFile(config, opensslConfig(names, usage), { mode: 0o600 });
    const result = await runner.run(
      [openssl, 'req', '-new', '-x509', '-key', keyFile, '-config', config, '-days', String(days), '-sha256'],
      { timeoutMs: 30_000, env: { OPENSSL_CONF: config } },
    );
    if (!succeeded(result) || !result.stdout.includes('-----BEGIN CERTIFICATE-----')) throw new TlsMaterialFailed(describeFailure(result));
    return result.stdout.slice(result.stdout.indexOf('-----BEGIN CERTIFICATE-----'));
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/**
 * A leaf certificate (CA:FALSE) for server authentication. Node accepts a self-signed leaf given
 * as its own `ca`, which is how nodes trust it after checking the pinned fingerprint.
 */
interface CertificateUsage {
  clientAuth: boolean;
  commonName: string;
}

function opensslConfig(names: readonly string[], usage: CertificateUsage): string {
  const dns = names.filter((name) => isIP(name) === 0);
  const ips = names.filter((name) => isIP(name) !== 0);
  return [
    '[req]',
    'distinguished_name = dn',
    'x509_extensions = ext',
    'prompt = no',
    '[dn]',
    `CN = ${usage.commonName}`,
    '[ext]',
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature',
    usage.clientAuth ? 'extendedKeyUsage = serverAuth, clientAuth' : 'extendedKeyUsage = serverAuth',
    'subjectKeyIdentifier = hash',
    'subjectAltName = @alt',
    '[alt]',
    ...dns.map((name, index) => `DNS.${index + 1} = ${name}`),
    ...ips.map((ip, index) => `IP.${index + 1} = ${ip}`),
    '',
  ].join('\n');
}

// Letters, digits, '-' and '_' (some machines' host names have one), dot-separated labels,
// optionally a leading '*.' wildcard. Anything else could also break the openssl file above.
function isDnsName(name: string): boolean {
  return name.length <= 253 && /^(\*\.)?[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*$/.test(name);
}
