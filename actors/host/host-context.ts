import os from 'node:os';
import type { ApplyContext } from './appliers/applier';
import type { ApplierSet } from './reconcile/applier-set';
import type { Adopter } from './reconcile/converge';
import { HostStore } from './store/host-store';
import { StateHandle } from './store/state-handle';
import { lockStore } from './store/store-lock';
import type { CommandRunner } from '../shared/process/command-runner';

import type { HostSettings } from './host-settings';
import { sealedOpener } from './appliers/sealed-content';

export { DEFAULT_SETTINGS, type HostSettings } from './host-settings';

/** One open host: its store (locked for this process), appliers and clock. */
export interface HostContext {
  settings: HostSettings;
  store: HostStore;
  state: StateHandle;
  runner: CommandRunner;
  appliers: ApplierSet;
  adopter: Adopter;
  now: () => Date;
  /** Said once when the store was opened: recovery from the last-good copy, for instance. */
  storeProblem?: string;
  /** Releases the store lock. */
  close(): Promise<void>;
}

/** What opening a host needs besides its settings (real ones from the composition root, fakes in tests). */
export interface HostParts {
  runner: CommandRunner;
  appliers: ApplierSet;
  adopter: Adopter;
  now?: () => Date;
}

/**
 * Locks and loads the store, and puts the host's parts together. `rebuild`: a store whose
 * files are both gone opens empty even where the host was used before (see LoadOptions).
 */
export async function openHost(settings: HostSettings, parts: HostParts, options: { rebuild?: boolean } = {}): Promise<HostContext> {
  const release = await lockStore(settings.stateDir);
  try {
    const store = new HostStore(settings.stateDir);
    // Under the lock, so the store may be repaired: see HostStore.load. What it sweeps (the
    // leftovers of a killed save) is routine after a kill and needs no one's attention.
    const loaded = await store.load({ repair: true, ...(options.rebuild === true ? { rebuild: true } : {}) });
    return {
      settings,
      store,
      state: new StateHandle(store, loaded.state),
      runner: parts.runner,
      appliers: parts.appliers,
      adopter: parts.adopter,
      now: parts.now ?? (() => new Date()),
      ...(loaded.problem === undefined ? {} : { storeProblem: loaded.problem }),
      close: release,
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/** The context every applier is given, from an open host. */
export function applyContextOf(host: HostContext, signal?: AbortSignal): ApplyContext {
  return {
    root: host.settings.root,
    stateDir: host.settings.stateDir,
    runner: host.runner,
    hostUnit: host.settings.hostUnit,
    openSealed: sealedOpener(() => host.state.current().identity?.secret_key),
    ...(signal === undefined ? {} : { signal }),
  };
}

/** The name briefings carry: the node's, or the machine's hostname before it is a node. */
export function nodeNameOf(host: HostContext): string {
  const identity = host.state.current().identity;
  if (identity !== null) return identity.node;
  const name = os.hostname().toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '').slice(0, 63);
  return name === '' ? 'unnamed' : name;
}
