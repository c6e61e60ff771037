import path from 'node:path';
import { Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import type { CommandRunner } from '../../shared/process/command-runner';
import type { HostState } from '../../../schema/host-state';
import type { ApplyContext } from '../appliers/applier';
import type { HostContext } from '../host-context';
import type { ApplierSet } from '../reconcile/applier-set';
import { DEFAULT_SETTINGS, type HostSettings } from '../host-settings';
import { runnerFrom } from '../profile/runner-context';
import type { NodeSetup } from '../run/run-host';
import { MachineCommand } from './machine-command';

/**
 * The base of the verbs that work on this machine's store: `--root` (MachineCommand) and
 * `--state-dir`, and opening the host (store locked, appliers chosen from the machine's profile).
 */
export abstract class HostCommand extends MachineCommand {
  stateDir = Option.String('--state-dir', {
    description: 'Where the host keeps state.json (default /var/lib/mesh-host, or <root>/var/lib/mesh-host with --root)',
  });

  /** The settings these options name. */
  async settings(): Promise<HostSettings> {
    const root = await this.rootDirectory();
    const stateDir = this.stateDir !== undefined
      ? path.resolve(this.stateDir)
      : root === '/' ? DEFAULT_SETTINGS.stateDir : path.join(root, DEFAULT_SETTINGS.stateDir);
    return { ...DEFAULT_SETTINGS, root, stateDir };
  }

  /** Opens the host for the length of `work`, then releases the store (`rebuild`: see openHost). */
  async withHost<T>(work: (host: HostContext) => Promise<T>, options: { rebuild?: boolean } = {}): Promise<T> {
    const settings = await this.settings();
    const { parts } = await nodeSetupOf(settings, runnerFrom(this.context));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { openHost } = require('../host-context') as typeof import('../host-context');
    const host = await openHost(settings, parts, options);
    try {
      if (host.storeProblem !== undefined) this.context.stderr.write(`warning: ${host.storeProblem}\n`);
      return await work(host);
    } finally {
      await host.close();
    }
  }

  /**
   * A dry run: what a pass would do on the store as it is, changed by `change` in memory only
   * (apply's file held), after `check` (apply's whole refusal). Nothing is written: the store is
   * read without its lock, and the pass is planned, not run (reconcile/plan-pass.ts). Exits 0
   * whether or not something would change, as puppet --noop and ansible --check do, so that 1
   * keeps its one meaning on every verb: something failed or would be refused.
   */
  async planOn(change: (state: HostState) => HostState = (state) => state, check?: (appliers: ApplierSet, ctx: ApplyContext) => void): Promise<CommandResult> {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { planPass, planFails } = require('../reconcile/plan-pass') as typeof import('../reconcile/plan-pass');
    const { formatPlan } = require('./format-results') as typeof import('./format-results');
    const { readStoreUnchanged } = require('./read-store-unchanged') as typeof import('./read-store-unchanged');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const settings = await this.settings();
    const { parts } = await nodeSetupOf(settings, runnerFrom(this.context));
    const state = change(await readStoreUnchanged(settings.stateDir));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { sealedOpener } = require('../appliers/sealed-content') as typeof import('../appliers/sealed-content');
    const openSealed = sealedOpener(() => state.identity?.secret_key);
    const ctx: ApplyContext = { root: settings.root, stateDir: settings.stateDir, runner: parts.runner, hostUnit: settings.hostUnit, openSealed };
    check?.(parts.appliers, ctx);
    const plan = await planPass(state, { appliers: parts.appliers, ctx });
    return { text: formatPlan(plan), json: plan, exitCode: planFails(plan) ? 1 : 0 };
  }
}

/**
 * The machine's appliers and rules (run/node-setup), loaded when a verb first works on the
 * machine: `run` on a machine that is not a node yet never does, and so loads none of the
 * appliers, the profile's probes or the store's contracts.
 */
export function nodeSetupOf(settings: HostSettings, runner: CommandRunner): Promise<NodeSetup> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../run/node-setup') as typeof import('../run/node-setup')).nodeSetupFor(settings, runner);
}
