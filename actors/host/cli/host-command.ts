import path from 'node:path';
import { Option } from 'clipanion';
import { MeshCommand } from '../../shared/cli/mesh-command';
import type { CommandRunner } from '../../shared/process/command-runner';
import type { HostContext } from '../host-context';
import { DEFAULT_SETTINGS, type HostSettings } from '../host-settings';
import { requireRootDirectory } from '../profile/root-directory';
import { runnerFrom } from '../profile/runner-context';
import type { NodeSetup } from '../run/run-host';

/**
 * The base of the verbs that work on this machine's store: `--root` and `--state-dir`, and
 * opening the host (store locked, appliers chosen from the machine's profile).
 */
export abstract class HostCommand extends MeshCommand {
  root = Option.String('--root', '/', {
    description: 'Treat this directory as the machine: every declared path resolves under it (default /)',
  });

  stateDir = Option.String('--state-dir', {
    description: 'Where the host keeps state.json (default /var/lib/mesh-host, or <root>/var/lib/mesh-host with --root)',
  });

  /** The settings these options name. */
  async settings(): Promise<HostSettings> {
    const root = await requireRootDirectory(this.root);
    const stateDir = this.stateDir !== undefined
      ? path.resolve(this.stateDir)
      : root === '/' ? DEFAULT_SETTINGS.stateDir : path.join(root, DEFAULT_SETTINGS.stateDir);
    return { ...DEFAULT_SETTINGS, root, stateDir };
  }

  /** Opens the host for the length of `work`, then releases the store. */
  async withHost<T>(work: (host: HostContext) => Promise<T>): Promise<T> {
    const settings = await this.settings();
    const { parts } = await nodeSetupOf(settings, runnerFrom(this.context));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { openHost } = require('../host-context') as typeof import('../host-context');
    const host = await openHost(settings, parts);
    try {
      if (host.storeProblem !== undefined) this.context.stderr.write(`warning: ${host.storeProblem}\n`);
      return await work(host);
    } finally {
      await host.close();
    }
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
