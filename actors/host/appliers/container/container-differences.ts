import type { ContainerResource } from '../../../../schema/resource';
import { resourceDigest } from '../../../../schema/resource';
import type { ContainerFacts, ContainerPort, ContainerVolume } from './container-backend';
import { DIGEST_LABEL, isHostContainer, OWNER, OWNER_LABEL } from './container-labels';
import { sameImage } from './image-reference';

/** How a container differs from its declaration, split by what puts each difference right. */
export interface ContainerComparison {
  /** Differences only a new container can put right: the engine cannot change them in place. */
  replace: string[];
  /** Set when the container exists but is not running: starting it puts this right. */
  notRunning?: string;
}

/**
 * Compares a declared container with what the engine reports. Only what the declaration says
 * is compared: the image's own environment variables, and its default command when none is
 * declared, are the image's business. Environment values are never quoted, since they may be
 * secrets; the name of the variable is enough to act on.
 */
export function compareContainer(resource: ContainerResource, facts: ContainerFacts): ContainerComparison {
  const replace: string[] = [];
  if (!isHostContainer(facts.labels)) replace.push(`not created by the host (no ${OWNER_LABEL}=${OWNER} label)`);
  if (!sameImage(facts.image, resource.image)) replace.push(`image is ${JSON.stringify(facts.image)}, declared ${JSON.stringify(resource.image)}`);
  if (resource.command !== undefined && !sameList(facts.command, resource.command)) {
    replace.push(`command is ${JSON.stringify(facts.command)}, declared ${JSON.stringify(resource.command)}`);
  }
  for (const [key, value] of Object.entries(resource.env).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!(key in facts.env)) replace.push(`env ${key} is not set`);
    else if (facts.env[key] !== value) replace.push(`env ${key} differs from the declaration`);
  }
  const ports = describeAll(facts.ports.map(describePort));
  const declaredPorts = describeAll(resource.ports.map(describePort));
  if (ports !== declaredPorts) replace.push(`ports are ${ports}, declared ${declaredPorts}`);
  const volumes = describeAll(facts.volumes.map(describeVolume));
  const declaredVolumes = describeAll(resource.volumes.map(describeVolume));
  if (volumes !== declaredVolumes) replace.push(`volumes are ${volumes}, declared ${declaredVolumes}`);
  if (facts.restart !== resource.restart) replace.push(`restart policy is ${JSON.stringify(facts.restart)}, declared ${JSON.stringify(resource.restart)}`);
  // What the record cannot show (a variable no longer declared, say) the digest label does.
  if (replace.length === 0 && facts.labels[DIGEST_LABEL] !== resourceDigest(resource)) {
    replace.push(`created from another declaration of it (its ${DIGEST_LABEL} label differs)`);
  }
  return facts.running ? { replace } : { replace, notRunning: `not running (${facts.status})` };
}

/** Every difference, one line each, the way an observation lists them. */
export function containerDifferences(comparison: ContainerComparison): string[] {
  return comparison.notRunning === undefined ? comparison.replace : [...comparison.replace, comparison.notRunning];
}

function describePort(port: ContainerPort): string {
  const address = port.address === undefined ? '' : `${port.address}:`;
  return `${address}${port.host}:${port.container}/${port.protocol}`;
}

function describeVolume(volume: ContainerVolume): string {
  return `${volume.source}:${volume.target}${volume.read_only ? ':ro' : ''}`;
}

function describeAll(items: string[]): string {
  return items.length === 0 ? 'none' : [...items].sort().join(', ');
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
