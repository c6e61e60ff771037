/** Where the host works: the machine's root and the state directory. */
export interface HostSettings {
  /** `--root`: the machine's root; every resource path resolves under it. */
  root: string;
  /** `--state-dir`: where state.json lives (default /var/lib/mesh-host). */
  stateDir: string;
  /** The host's own service unit, which no declaration may manage. */
  hostUnit: string;
}

/** The defaults on a real machine. */
export const DEFAULT_SETTINGS: HostSettings = {
  root: '/',
  stateDir: '/var/lib/mesh-host',
  hostUnit: 'nox-mesh-host',
};
