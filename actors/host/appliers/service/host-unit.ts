/** The host's own unit as the packages install it. */
export const HOST_UNIT = 'nox-mesh-host';
/** What the init starts: the launcher, which starts the host (and rolls it back). */
export const LAUNCHER_UNIT = 'nox-mesh-host-launch';

/** Why a declaration naming the host's own unit is refused; a sentence for the report. */
export const HOST_UNIT_REFUSAL =
  "a declaration may not manage the host's own unit: the installation owns the host; the host owns everything else";

/**
 * True when `name` is the host's own unit or its launcher, however it is spelled: with or
 * without `.service`, as the configured unit (`hostUnit`) or as the packages name it. A host
 * that stopped itself half way through an apply would leave nothing running to finish it.
 */
export function namesHostUnit(name: string, hostUnit: string): boolean {
  const configured = bareUnitName(hostUnit);
  const own = new Set([HOST_UNIT, LAUNCHER_UNIT, configured, `${configured}-launch`]);
  return own.has(bareUnitName(name));
}

/** The unit name without a `.service` suffix, so `nginx` and `nginx.service` compare equal. */
export function bareUnitName(name: string): string {
  return name.endsWith('.service') ? name.slice(0, -'.service'.length) : name;
}
