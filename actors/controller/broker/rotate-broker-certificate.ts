import { createPublicKey, X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { probeBrokerCertificate } from '../../shared/bus';
import { loadControllerConfig } from '../config/load-controller-config';
import { writeControllerConfig } from '../config/write-controller-config';
import type { ControllerContext } from '../controller-context';
import { getNodeDeclarationState } from '../declarations/declarations.repo';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { sendCurrent } from '../declarations/send-current';
import { nextCertificatePaths, readBrokerCertificates, type BrokerCertificates } from './broker-certificates';
import { brokerPaths } from './broker-paths';
import { listNodePins, type NodePins } from './broker-pins.repo';
import { brokerUrlsOf } from '../config/broker-urls';
import { reloadMeshBrokers } from './reload-mesh-brokers';
import { generateTlsMaterial, readTlsMaterial } from './tls-material';
import { NextCertificateDamaged, NoNextCertificate, SwitchNotReloaded, SwitchWouldCutOff } from './rotation-errors';

/** A certificate as the rotation's answer names it. */
export interface CertificateNamed {
  fingerprint: string;
  expires_at: string;
}

/** What `mesh-control broker rotate-certificate` did, with or without `--switch`. */
export interface RotationOutcome {
  /** `announced`: the next certificate is made and on its way to every node; `switched`: the broker presents it. */
  stage: 'announced' | 'switched';
  /** The certificate the broker presents now. */
  current: CertificateNamed;
  /** The next one, while announced; null once switched. */
  next: CertificateNamed | null;
  /** True when this call made the next certificate (false: it was made before, and announced again). */
  made: boolean;
  /** Nodes sent their declaration carrying the pins, with its generation. */
  sent: Array<{ node: string; generation: number }>;
  /** Nodes that could not be sent one now, and why (each gets the pins with its next declaration). */
  not_sent: Array<{ node: string; why: string }>;
  /**
   * Nodes whose latest heartbeat does not say they pin the certificate that counts: the next
   * one while announced (the switch would cut them off), the current one once switched (they
   * pin only the old one and must be enrolled again).
   */
  behind: Array<{ node: string; pins: string[] | null }>;
}

/** How the switch is made; tests give their own reload. */
export interface SwitchOptions {
  /** Switch even when some nodes do not pin the next certificate yet. */
  force?: boolean;
  /** Makes the broker take its new key and certificate (a SIGHUP by its pid file unless given). */
  reload?: () => Promise<void>;
}

/**
 * Makes the broker's next certificate (same names as the current one, a new key) beside the
 * current one, unless one is made already, and sends every node holding an identity its
 * declaration again: every declaration pins the broker certificates the broker directory holds,
 * so each node pins both from its next declaration on. Nothing changes at the broker yet.
 */
export async function announceNextCertificate(ctx: ControllerContext): Promise<RotationOutcome> {
  const { cert_file: certFile, dir: brokerDir } = ctx.config.broker;
  let certificates = await readBrokerCertificates(certFile, brokerDir);
  let made = false;
  if (certificates.next === null) {
    const current = await readTlsMaterial(brokerPaths(brokerDir).keyFile, certFile);
    const next = nextCertificatePaths(brokerDir);
    await generateTlsMaterial({ keyFile: next.keyFile, certFile: next.certFile, subjectAltNames: current.subjectAltNames });
    certificates = await readBrokerCertificates(certFile, brokerDir);
    made = true;
    ctx.log(`broker certificate: made the next certificate sha256 ${certificates.next?.fingerprint ?? '?'}; announcing it to every node`, { fingerprint: certificates.next?.fingerprint ?? null });
  }
  const next = certificates.next as NonNullable<BrokerCertificates['next']>;
  const { sent, notSent } = await resendToEveryNode(ctx);
  return {
    stage: 'announced',
    current: named(certificates.current),
    next: named(next),
    made,
    sent,
    not_sent: notSent,
    behind: behindOf(await listNodePins(ctx.store), next.fingerprint),
  };
}

/**
 * Switches the broker to its next certificate: refused (SwitchWouldCutOff) while a node with an
 * identity has not said it pins it, unless forced; the next key must match the next
 * certificate. The current key and certificate are kept as previous-*, the next ones take their
 * place, mesh.json's fingerprint follows (so tokens and the CLI pin the new one), and the broker
 * reloads. Once a probe sees the broker present the new certificate, every node is sent its
 * declaration pinning it alone. Run again after a switch whose reload failed, it only checks the
 * broker and sends the pins.
 */
export async function switchBrokerCertificate(ctx: ControllerContext, options: SwitchOptions = {}): Promise<RotationOutcome> {
  const { cert_file: certFile, dir: brokerDir, config_file: configFile } = ctx.config.broker;
  const paths = brokerPaths(brokerDir);
  const next = nextCertificatePaths(brokerDir);
  const previous = previousCertificatePaths(brokerDir);
  const before = await readBrokerCertificates(certFile, brokerDir);
  if (before.next === null) {
    // Only a switch already made may be finished: otherwise there is nothing to switch to.
    if (!(await exists(previous.certFile))) throw new NoNextCertificate(next.certFile);
  } else {
    const pins = await listNodePins(ctx.store);
    const behind = behindOf(pins, before.next.fingerprint);
    if (behind.length > 0 && options.force !== true) throw new SwitchWouldCutOff(behind, before.next.fingerprint);
    await checkKeyMatches(next.keyFile, before.next.pem);
    await fs.copyFile(paths.keyFile, previous.keyFile);
    await fs.copyFile(certFile, previous.certFile);
    // The key first: a broker reloading between the two renames would fail to load the pair
    // and keep running on the old one, which every node still pins.
    await fs.rename(next.keyFile, paths.keyFile);
    await fs.rename(next.certFile, certFile);
    const config = await loadControllerConfig(ctx.dir);
    await writeControllerConfig(ctx.dir, { ...config, broker: { ...config.broker, fingerprint: before.next.fingerprint } });
    // The serving controller issues tokens from its configuration: they must pin the new one.
    ctx.config.broker.fingerprint = before.next.fingerprint;
    ctx.log(`broker certificate: switched to sha256 ${before.next.fingerprint} (the previous one is kept as ${previous.certFile}); reloading the broker`, { fingerprint: before.next.fingerprint });
    try {
      // Every server of the mesh that runs on this machine: on a cluster they share these files.
      await (options.reload ?? (() => reloadMeshBrokers(brokerDir)))();
    } catch (error) {
      throw new SwitchNotReloaded(configFile, error);
    }
  }
  const after = await readBrokerCertificates(certFile, brokerDir);
  // Every server must present the new certificate before any node is told to pin it alone: a
  // cluster server on another machine has its own copy of the files, and a node sent the new
  // pin alone would refuse it from then on.
  const behindServers: string[] = [];
  for (const url of brokerUrlsOf(ctx.config)) {
    const presented = await probeBrokerCertificate(url).catch((error: unknown) => ({ fingerprint: `none (${(error as Error).message})` }));
    if (presented.fingerprint !== after.current.fingerprint) behindServers.push(`${url} presents sha256 ${presented.fingerprint}`);
  }
  if (behindServers.length > 0) {
    throw new SwitchNotReloaded(configFile, new Error(`not every server presents sha256 ${after.current.fingerprint}: ${behindServers.join('; ')}. A server on another machine needs ${certFile} and its key copied from this one, and a reload (kill -HUP by its pid file)`));
  }
  const { sent, notSent } = await resendToEveryNode(ctx);
  return {
    stage: 'switched',
    current: named(after.current),
    next: null,
    made: false,
    sent,
    not_sent: notSent,
    behind: behindOf(await listNodePins(ctx.store), after.current.fingerprint),
  };
}

/** Where the certificate the broker presented before the last switch is kept. */
export function previousCertificatePaths(brokerDir: string): { keyFile: string; certFile: string } {
  const { keyFile, certFile } = brokerPaths(brokerDir);
  return {
    keyFile: path.join(path.dirname(keyFile), `previous-${path.basename(keyFile)}`),
    certFile: path.join(path.dirname(certFile), `previous-${path.basename(certFile)}`),
  };
}

/** The nodes that have not said they pin `fingerprint`. */
export function behindOf(pins: readonly NodePins[], fingerprint: string): Array<{ node: string; pins: string[] | null }> {
  return pins.filter((entry) => entry.pins === null || !entry.pins.includes(fingerprint)).map((entry) => ({ node: entry.node, pins: entry.pins }));
}

/** Formats the outcome for a person. */
export function formatRotation(outcome: RotationOutcome): string {
  const lines: string[] = [];
  if (outcome.stage === 'announced') {
    lines.push(`${outcome.made ? 'made' : 'already made'}: the broker's next certificate sha256 ${outcome.next?.fingerprint ?? ''} (valid until ${outcome.next?.expires_at ?? ''})`);
    lines.push(`the broker still presents sha256 ${outcome.current.fingerprint} (valid until ${outcome.current.expires_at}); every node is told to pin both`);
  } else {
    lines.push(`switched: the broker presents sha256 ${outcome.current.fingerprint} (valid until ${outcome.current.expires_at}); every node is told to pin it alone`);
  }
  lines.push(`sent: ${outcome.sent.length === 0 ? 'no node' : outcome.sent.map((entry) => `${entry.node} (generation ${entry.generation})`).join(', ')}`);
  for (const entry of outcome.not_sent) lines.push(`not sent to ${entry.node}: ${entry.why}`);
  if (outcome.behind.length > 0) {
    const who = outcome.behind.map((entry) => entry.node).join(', ');
    lines.push(outcome.stage === 'announced'
      ? `not pinning the next certificate yet: ${who} (each does once it links and takes its declaration; mesh-control status shows who is left)`
      : `pinning only the old certificate: ${who}; each must be enrolled again (mesh-control token issue --node NAME, then nox-mesh-host enrol --token … on the machine)`);
  }
  lines.push(outcome.stage === 'announced'
    ? outcome.behind.length === 0 ? 'next: mesh-control broker rotate-certificate --switch' : 'next: once every node pins it, mesh-control broker rotate-certificate --switch'
    : 'done: no node was enrolled again for it');
  return lines.join('\n');
}

async function resendToEveryNode(ctx: ControllerContext): Promise<{ sent: RotationOutcome['sent']; notSent: RotationOutcome['not_sent'] }> {
  const queue = nodeWorkQueue(ctx);
  const nodes = await listNodePins(ctx.store);
  const results = await Promise.allSettled(nodes.map((entry) => queue.run(entry.node, () => sendCurrent(ctx, entry.node))));
  const sent: RotationOutcome['sent'] = [];
  const notSent: RotationOutcome['not_sent'] = [];
  for (const [index, result] of results.entries()) {
    const node = nodes[index]?.node ?? '';
    if (result.status === 'fulfilled' && result.value !== undefined) sent.push({ node, generation: result.value.generation });
    else if (result.status === 'fulfilled') notSent.push({ node, why: await whyNotSent(ctx, node) });
    else notSent.push({ node, why: result.reason instanceof Error ? result.reason.message : String(result.reason) });
  }
  return { sent, notSent };
}

async function whyNotSent(ctx: ControllerContext, node: string): Promise<string> {
  const state = await getNodeDeclarationState(ctx.store, node);
  if (state?.release_generation !== null && state?.release_generation !== undefined) return 'it is being released';
  return 'it has no overlay address yet; it takes the pins with its first declaration';
}

async function checkKeyMatches(keyFile: string, certPem: string): Promise<void> {
  let keyPem: string;
  try {
    keyPem = await fs.readFile(keyFile, 'utf8');
  } catch (error) {
    throw new NextCertificateDamaged(keyFile, `the key cannot be read: ${(error as Error).message}`);
  }
  try {
    const fromKey = createPublicKey(keyPem).export({ type: 'spki', format: 'der' });
    const fromCert = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
    if (!fromKey.equals(fromCert)) throw new NextCertificateDamaged(keyFile, 'they hold different public keys');
  } catch (error) {
    if (error instanceof NextCertificateDamaged) throw error;
    throw new NextCertificateDamaged(keyFile, (error as Error).message);
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(() => true, () => false);
}

function named(certificate: { fingerprint: string; expires_at: string }): CertificateNamed {
  return { fingerprint: certificate.fingerprint, expires_at: certificate.expires_at };
}

