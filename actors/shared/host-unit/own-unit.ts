import { join, resolve, sep } from 'node:path';
import type { Resource } from '../../../schema/resource';
import { namesHostUnit, namesHostUnitFile } from './host-unit';

/**
 * What a host may not be told to manage, as its settings place it: its own unit (and so its
 * launcher and resume unit), the machine's root its paths are under, and its state directory.
 */
export interface OwnUnitRules {
  hostUnit: string;
  root: string;
  stateDir: string;
}

/**
 * The rules of a host installed by its packages with no settings changed. The controller judges
 * against these: it does not know a host's settings, and the package names are refused under
 * any settings (see namesHostUnit).
 */
export const PACKAGED_HOST_RULES: Readonly<OwnUnitRules> = Object.freeze({ hostUnit: 'nox-mesh-host', root: '/', stateDir: '/var/lib/mesh-host' });

/**
 * Why the path `path` (absolute from the machine's root) is the host's own: in its state
 * directory, or a file of how it runs (namesHostUnitFile); undefined when a declaration may name
 * it. Lexical only: a link leading there is caught where the host resolves the path.
 * `absolute` makes the root and the state directory absolute (the host passes a remembering one).
 */
export function ownPathRefusal(path: string, rules: OwnUnitRules, absolute: (path: string) => string = resolve): string | undefined {
  const onMachine = join(absolute(rules.root), path);
  const stateDir = absolute(rules.stateDir);
  if (onMachine === stateDir || onMachine.startsWith(stateDir + sep)) {
    return `${path} is in the host's state directory (${rules.stateDir}); the host's store is not a resource. Declare another path`;
  }
  if (namesHostUnitFile(path, rules.hostUnit)) {
    return `${path} defines how the host itself runs (${rules.hostUnit}); that belongs to the installation, not to a declaration. Remove it from the module`;
  }
  return undefined;
}

/**
 * Why a host refuses a declaration naming `resource` whole (report reason `own_unit`): a service
 * that is the host itself, or a file or directory that is its state or how it runs; undefined
 * when the resource is not the host's own. One check for both sides: the host's gate refuses with
 * it, and the controller's doctor finds with it a declaration the host would refuse before it is
 * sent.
 */
export function ownUnitRefusal(resource: Resource, rules: OwnUnitRules): string | undefined {
  if (resource.shape === 'service' && namesHostUnit(resource.name, rules.hostUnit)) {
    return `the declaration names the service "${resource.name}", which is the host itself; only the installation manages it`;
  }
  if (resource.shape === 'file' || resource.shape === 'directory') return ownPathRefusal(resource.path, rules);
  return undefined;
}
