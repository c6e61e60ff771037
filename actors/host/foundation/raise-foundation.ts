import type { HostState } from '../../../schema/host-state';
import { resourceKey, type Resource } from '../../../schema/resource';
import { refuseWhole } from '../cli/declaration-refused';
import { applyContextOf, type HostContext } from '../host-context';
import { reconcilePass, type PassReport } from '../reconcile/reconcile-pass';

/** What raising the foundation did. */
export interface RaisedFoundation extends PassReport {
  /**
   * The bundle's resources, left to the machine once applied: the host owns none of them, so no
   * later declaration removes them by leaving them out (see raiseFoundation).
   */
  left_to_machine: string[];
}

/**
 * Applies a foundation bundle on a hosted machine in one pass, alongside whatever was applied
 * by hand, then leaves what it raised to the machine: its keys are not held, not owned, and the
 * directories made for it are not the host's to take away.
 *
 * Why not keep them, as `apply` keeps a hand-applied file: a node drops what was applied by hand
 * when its controller's first declaration arrives, and removes what it owns and is no longer
 * declared. Owned, the broker and the controller would be stopped by the first declaration of
 * the controller they run, which then could never send another. Left to the machine, they are
 * services like any other it had before it was a node, and the first node holds exactly what its
 * controller declares for it: it is not special (seed 000). A module may later declare them,
 * and adoption then takes them over knowingly.
 *
 * The bundle is refused whole before anything is done when any resource is not this host's to
 * take. A resource that fails leaves the rest of the pass to run; `reconcile` again picks up
 * where it stopped, since what is done is seen as done (the action's guard, the running services).
 */
export async function raiseFoundation(host: HostContext, resources: readonly Resource[], source: string): Promise<RaisedFoundation> {
  refuseWhole(resources, host.appliers, applyContextOf(host), source);
  const before = host.state.current();
  const ownedBefore = new Set(before.owned.resources.map((owned) => owned.key));
  const madeBefore = new Set(before.made_directories);
  const keys = new Set(resources.map(resourceKey));
  await host.state.update((state) => ({
    ...state,
    local_resources: [...state.local_resources.filter((resource) => !keys.has(resourceKey(resource))), ...resources],
  }));
  let report: PassReport;
  try {
    report = await reconcilePass(host, ['start']);
  } finally {
    await host.state.update((state) => leftToMachine(state, keys, ownedBefore, madeBefore, before.local_resources));
  }
  return { ...report, left_to_machine: [...keys] };
}

/**
 * The store with the bundle's resources given up: hand-applied resources as they were before
 * the bundle, nothing of it owned or half-made that was not owned before, no directory made for
 * it kept.
 */
function leftToMachine(state: HostState, keys: ReadonlySet<string>, ownedBefore: ReadonlySet<string>, madeBefore: ReadonlySet<string>, localBefore: readonly Resource[]): HostState {
  const local = localBefore.filter((resource) => keys.has(resourceKey(resource)));
  return {
    ...state,
    local_resources: [...state.local_resources.filter((resource) => !keys.has(resourceKey(resource))), ...local],
    owned: { resources: state.owned.resources.filter((owned) => !keys.has(owned.key) || ownedBefore.has(owned.key)) },
    // A resource begun and not finished (the pass was stopped) is not the host's to undo either.
    applying: state.applying.filter((key) => !keys.has(key) || ownedBefore.has(key)),
    made_directories: state.made_directories.filter((directory) => madeBefore.has(directory)),
  };
}
