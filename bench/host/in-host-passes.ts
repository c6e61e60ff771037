import path from 'node:path';
import { resourceKey } from '../../schema/resource';
import { reconcilePass } from '../../actors/host/reconcile/reconcile-pass';
import { openHost, DEFAULT_SETTINGS } from '../../actors/host/host-context';
import { appliersForProfile } from '../../actors/host/appliers/appliers-for-profile';
import { createAdopter } from '../../actors/host/adoption/adoption.actor';
import { detectProfile } from '../../actors/host/profile/detect-profile';
import { ProcessRunner } from '../../actors/shared/process/command-runner';
import { benchResources, HOST_FILES } from './bench-files';

/** Each pass's own duration: the first applies the files, the others find nothing to do. */
export interface InHostPasses {
  first: number;
  again: number[];
}

/**
 * A host opened in this process the way `run` opens it (its profile's appliers, the adopter),
 * the files held as a hand-applied declaration; the first pass applies them and `noops` more
 * passes find nothing to do. Returns each pass's own duration.
 */
export async function inHostPasses(root: string, noops: number): Promise<InHostPasses> {
  const runner = new ProcessRunner();
  const profile = await detectProfile({ root, runner });
  const host = await openHost({ ...DEFAULT_SETTINGS, root, stateDir: path.join(root, DEFAULT_SETTINGS.stateDir) }, { runner, appliers: appliersForProfile(profile), adopter: createAdopter() });
  try {
    const resources = benchResources(HOST_FILES);
    await host.state.update((state) => ({ ...state, local_resources: resources }));
    const pass = async (outcome: 'applied' | 'unchanged'): Promise<number> => {
      const started = performance.now();
      const report = await reconcilePass(host, ['declaration']);
      const ms = performance.now() - started;
      if ((report.counts[outcome] ?? 0) !== resources.length) throw new Error(`an in-host pass did not leave every resource ${outcome}: ${JSON.stringify(report.counts)}`);
      return ms;
    };
    const first = await pass('applied');
    const again: number[] = [];
    for (let run = 0; run < noops; run += 1) again.push(await pass('unchanged'));
    if (host.state.current().owned.resources.length !== resources.length) {
      throw new Error(`the host owns ${host.state.current().owned.resources.length} resources after the passes, not ${resources.length} (${resources.map(resourceKey)[1]} …)`);
    }
    return { first, again };
  } finally {
    await host.close();
  }
}
