import { SHAPES_FOR_HOST_KIND } from '../../../schema/resource';
import type { CommandRunner } from '../../shared/process/command-runner';
import { createAdopter } from '../adoption/adoption.actor';
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
    parts: { runner, appliers: appliersForProfile(profile), adopter: createAdopter() },
    rules: { hostUnit: settings.hostUnit, root: settings.root, stateDir: settings.stateDir, shapes: SHAPES_FOR_HOST_KIND[profile.host_kind] },
    hostKind: profile.host_kind,
  };
}
