import type { Profile } from '../../../schema/profile';
import { formatTable } from '../../shared/cli/format-table';

/** The profile as a person reads it: one fact a line, names aligned. */
export function formatProfile(profile: Profile): string {
  const os = [profile.os.pretty_name, `(${[profile.os.id, profile.os.version_id].filter((part) => part !== undefined).join(' ')})`]
    .filter((part) => part !== undefined)
    .join(' ');
  return formatTable([
    ['os', os],
    ['arch', profile.arch],
    ['kernel', profile.kernel],
    ['init', profile.init],
    ['package manager', profile.package_manager],
    ['container runtime', profile.container_runtime],
    ['graphical session', profile.graphical_session ? 'yes' : 'no'],
    ['wireguard', profile.wireguard ?? 'not said'],
    ['host kind', profile.host_kind],
    ['hostname', profile.hostname],
  ]);
}
