import { SHAPES_FOR_HOST_KIND } from '../../../schema/resource';
import type { CommandRunner } from '../../shared/process/command-runner';
import type { Adopter } from '../reconcile/converge';
import { appliersForProfile } from '../appliers/appliers-for-profile';
import type { HostSettings } from '../host-settings';
import { detectProfile } from '../profile/detect-profile';
import type { NodeSetup } from './run-host';

/**
 * What the host works on this machine with: the appliers its profile calls for (package
 * manager, init system, container engine), the adopter, and the rules its gate admits
 * declarations by. Detecting the profile runs the machine's own tools, so it is done when a
 * verb first needs the machine, not when the process starts.
 */
export async function nodeSetupFor(settings: HostSettings, runner: CommandRunner): Promise<NodeSetup> {
  const profile = await detectProfile({ root: settings.root, runner });
  return {
    parts: { runner, appliers: appliersForProfile(profile), adopter: lazyAdopter() },
    rules: { hostUnit: settings.hostUnit, root: settings.root, stateDir: settings.stateDir, shapes: SHAPES_FOR_HOST_KIND[profile.host_kind] },
    hostKind: profile.host_kind,
  };
}

/**
 * The adopter, loaded the first time a pass meets a resource it does not own yet (the adoption
 * machine and its keep-original code): a node that holds what it already owns, idle for months,
 * never evaluates that code.
 */
function lazyAdopter(): Adopter {
  let adopter: Adopter | undefined;
  return {
    adopt: (...args) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      adopter ??= (require('../adoption/adoption.actor') as typeof import('../adoption/adoption.actor')).createAdopter();
      return adopter.adopt(...args);
    },
  };
}
