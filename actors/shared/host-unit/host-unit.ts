/** The host's own unit as the packages install it. */
export const HOST_UNIT = 'nox-mesh-host';
/** What the init starts: the launcher, which starts the host (and rolls it back). */
export const LAUNCHER_UNIT = 'nox-mesh-host-launch';
/** The unit that rouses the host when the machine wakes (packaging/nox-mesh-host-resume.service). */
export const RESUME_UNIT = 'nox-mesh-host-resume';

/** Why a declaration naming the host's own unit is refused; a sentence for the report. */
export const HOST_UNIT_REFUSAL =
  "a declaration may not manage the host's own unit: the installation owns the host; the host owns everything else";

/**
 * True when `name` is the host's own unit, its launcher or its resume unit, however it is
 * spelled: with or without `.service`, as the configured unit (`hostUnit`) or as the packages
 * name it. A host that stopped itself half way through an apply would leave nothing running to
 * finish it; one whose resume unit was taken away would sit on a dead link after every sleep.
 */
export function namesHostUnit(name: string, hostUnit: string): boolean {
  return hostUnitNames(hostUnit).has(bareUnitName(name));
}

/**
 * True when the file or directory at `path` (a declared path, absolute from the machine's root)
 * is part of how the host runs, as the packages install it: the unit files of the host, its
 * launcher and its resume unit (and their drop-in directories and `.wants` links), their OpenRC
 * scripts and settings, elogind's resume hook, and the installation's own directory.
 */
export function namesHostUnitFile(path: string, hostUnit: string): boolean {
  const units = hostUnitNames(hostUnit);
  const segments = path.split('/');
  const base = segments[segments.length - 1] ?? '';
  const parent = segments[segments.length - 2] ?? '';
  return (
    (base.endsWith('.service') && units.has(bareUnitName(base))) ||
    segments.some((segment) => segment.endsWith('.service.d') && units.has(segment.slice(0, -'.service.d'.length))) ||
    ((path.startsWith('/etc/init.d/') || path.startsWith('/etc/conf.d/')) && units.has(base) && segments.length === 4) ||
    (parent === 'system-sleep' && units.has(base)) ||
    path === `/usr/lib/${HOST_UNIT}` || path.startsWith(`/usr/lib/${HOST_UNIT}/`)
  );
}

// The names for the last unit asked about: a pass asks for every resource it holds, and a host
// has one unit.
let lastNames: { hostUnit: string; names: ReadonlySet<string> } | undefined;

function hostUnitNames(hostUnit: string): ReadonlySet<string> {
  if (lastNames?.hostUnit === hostUnit) return lastNames.names;
  const configured = bareUnitName(hostUnit);
  const names = new Set([HOST_UNIT, LAUNCHER_UNIT, RESUME_UNIT, configured, `${configured}-launch`, `${configured}-resume`]);
  lastNames = { hostUnit, names };
  return names;
}

/** The unit name without a `.service` suffix, so `nginx` and `nginx.service` compare equal. */
export function bareUnitName(name: string): string {
  return name.endsWith('.service') ? name.slice(0, -'.service'.length) : name;
}
