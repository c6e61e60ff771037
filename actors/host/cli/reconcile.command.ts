import path from 'node:path';
import { Command, Option } from 'clipanion';
import type { FoundationBundle } from '../../../schema/foundation-bundle';
import type { HostState } from '../../../schema/host-state';
import type { Resource } from '../../../schema/resource';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { passFailed, reconcilePass } from '../reconcile/reconcile-pass';
import { setOnePassFlagsFor } from './one-pass-flags';
import { formatPass } from './format-results';
import { HostCommand } from './host-command';

/** `nox-mesh-host reconcile`: one pass now — make the machine match what the store holds. */
export class ReconcileCommand extends HostCommand {
  static override paths = [['reconcile']];
  static override usage = Command.Usage({
    description: 'Make the machine match what the host holds, now, and say what changed',
    details: `
      Applies what differs from the last declaration (verified again against the controller's
      key) and what was applied by hand, reads every change back, and removes what the host
      owns and no longer holds. The running host does this on start, on reconnect, when a
      declaration arrives and every ten minutes.

      On a machine that is not a node yet and holds nothing (hosted, as installed), it applies
      the bundle the host carries instead, which raises a mesh here: the controller's package (mesh-control), the mesh
      made by \`mesh-control init\` on the embedded store, and the broker and the controller
      as services. This is the first node's first step; then
      \`mesh-control token issue --new\` and \`nox-mesh-host enrol --token …\` make it a node
      like any other. What the bundle raised is left to the machine, not owned by the host, so
      no declaration removes it by leaving it out. \`nox-mesh-host bundle\` prints the carried
      bundle; \`--bundle FILE\` applies another (one made with \`bundle --broker-url\`, for
      instance). An episodic host cannot be a first node and says why.

      With --dry-run, nothing is written, run or removed: each resource is looked at and what
      would change is printed (an action whose guard is a command is reported as one that
      would run, its guard not asked). It exits 0 whether or not something would change, and
      1 when something would be refused or cannot be read, as the pass itself would.
    `,
    examples: [
      ['Put this machine back as the host holds it', '$0 reconcile'],
      ['See what a reconcile would change, changing nothing', '$0 reconcile --dry-run'],
      ['Raise the first node\'s mesh from a bundle file', '$0 bundle --broker-url tls://mesh.example.net:4222 > first-node.json && $0 reconcile --bundle first-node.json'],
    ],
  });

  dryRun = Option.Boolean('--dry-run', false, {
    description: 'Print what the pass would change, and change nothing: no file, no store write, no action run',
  });
  bundle = Option.String('--bundle', {
    description: 'On a machine that is not a node yet: raise the mesh from this bundle file (see `bundle`), alongside anything applied by hand',
  });

  async run(): Promise<CommandResult> {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { readStoreUnchanged, StoreNeedsRecovery } = require('./read-store-unchanged') as typeof import('./read-store-unchanged');
    const { FoundationOnEnrolledNode } = require('../foundation/foundation-errors') as typeof import('../foundation/foundation-errors');
    /* eslint-enable @typescript-eslint/no-require-imports */
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { isBlank } = require('../enrolment/enrolled-state') as typeof import('../enrolment/enrolled-state');
    const settings = await this.settings();
    // Read without the lock only to choose: the pass itself works on the locked store. A store
    // that must be recovered first is a machine that held something: its reconcile recovers it
    // and goes on as it always has, and never raises a mesh on a guess.
    const stored = await readStoreUnchanged(settings.stateDir).catch((error: unknown) => {
      if (error instanceof StoreNeedsRecovery && this.bundle === undefined) return undefined;
      throw error;
    });
    const identity = stored?.identity ?? null;
    // The carried bundle is for a machine that holds nothing yet: one where a person applied
    // something by hand is being repaired, and its reconcile holds it to that, as it always has.
    if (stored === undefined || identity !== null || (this.bundle === undefined && !isBlank(stored))) {
      if (identity !== null && this.bundle !== undefined) {
        throw new FoundationOnEnrolledNode(`this machine is node ${identity.node} already; a mesh is raised from a bundle on a machine that is not a node yet`, {
          value: this.bundle,
          next: `run nox-mesh-host reconcile without --bundle; to change what node ${identity.node} holds, declare it from the controller (mesh-control node declare ${identity.node} FILE)`,
        });
      }
      if (this.dryRun) return this.planOn();
      return this.withHost(async (host) => {
        setOnePassFlagsFor(host.state.current().local_resources.length + host.state.current().owned.resources.length);
        const report = await reconcilePass(host, ['start']);
        return { text: formatPass(report), json: report, exitCode: passFailed(report) ? 1 : 0 };
      });
    }
    const resources = await this.foundation();
    if (this.dryRun) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { refuseWhole } = require('./declaration-refused') as typeof import('./declaration-refused');
      return this.planOn(
        (state: HostState) => ({ ...state, local_resources: [...state.local_resources, ...resources] }),
        (appliers, ctx) => refuseWhole(resources, appliers, ctx, this.bundleSource()),
      );
    }
    return this.withHost(async (host) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { raiseFoundation } = require('../foundation/raise-foundation') as typeof import('../foundation/raise-foundation');
      const raised = await raiseFoundation(host, resources, this.bundleSource());
      const failed = passFailed(raised);
      return { text: `${formatPass(raised)}\n${failed ? this.retryText() : this.nextText(host.settings.root, host.settings.stateDir)}`, json: raised, exitCode: failed ? 1 : 0 };
    });
  }

  /** The resources of the bundle to apply: the file's, or the one this machine's host carries. */
  private async foundation(): Promise<Resource[]> {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { detectProfile } = require('../profile/detect-profile') as typeof import('../profile/detect-profile');
    const { foundationBundleFor } = require('../foundation/foundation-bundle-for') as typeof import('../foundation/foundation-bundle-for');
    const { readFoundationBundle } = require('../foundation/read-foundation-bundle') as typeof import('../foundation/read-foundation-bundle');
    const { FirstNodeRefused } = require('../foundation/foundation-errors') as typeof import('../foundation/foundation-errors');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const root = await this.rootDirectory();
    const profile = await detectProfile({ root });
    const carried = foundationBundleFor(profile, { root });
    // An episodic host refuses whatever the file says: it takes no package and no service.
    if ('refused' in carried) throw new FirstNodeRefused(carried.refused, { value: this.bundle ?? root, next: carried.next });
    const bundle: FoundationBundle = this.bundle === undefined ? carried : await readFoundationBundle(this.bundle);
    if ('refused' in bundle) throw new FirstNodeRefused(`the bundle says: ${bundle.refused}`, { value: this.bundle ?? root, next: bundle.next });
    return bundle.resources;
  }

  private bundleSource(): string {
    return this.bundle ?? 'the bundle this host carries (nox-mesh-host bundle)';
  }

  private retryText(): string {
    return `the mesh is not up yet: fix what failed above and run nox-mesh-host reconcile${this.bundle === undefined ? '' : ` --bundle ${this.bundle}`} again; what was done stays done`;
  }

  private nextText(root: string, stateDir: string): string {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { FIRST_NODE_MESH_DIR } = require('../foundation/foundation-bundle-for') as typeof import('../foundation/foundation-bundle-for');
    const onRoot = root === '/' ? '' : ` --root ${root}`;
    const meshDir = root === '/' ? '' : ` --dir ${path.join(root, FIRST_NODE_MESH_DIR)}`;
    const stateDirText = stateDir === path.join(root, '/var/lib/mesh-host') ? '' : ` --state-dir ${stateDir}`;
    return [
      'the mesh is up on this machine: its broker and its controller run as services, left to the machine (not owned by the host).',
      'next, make this machine its first node:',
      `  mesh-control token issue --new${meshDir}`,
      `  nox-mesh-host enrol --token <the token>${onRoot}${stateDirText}`,
    ].join('\n');
  }
}
