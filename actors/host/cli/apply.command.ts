import * as fs from '../../shared/fs/promised-fs';
import { Command, Option } from 'clipanion';
import { bytesText, MAX_DECLARATION_BYTES } from '../../../schema/bounds';
import type { HostState } from '../../../schema/host-state';
import { LocalDeclaration } from '../../../schema/local-declaration';
import { parseContract } from '../../../schema/parse';
import { vouchParsed } from '../../../schema/vouched';
import { Resource, resourceKey } from '../../../schema/resource';
import { OperatorError } from '../../shared/operator-error';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { applyContextOf } from '../host-context';
import { passFailed, reconcilePass, type PassReport } from '../reconcile/reconcile-pass';
import { setOnePassFlagsFor } from './one-pass-flags';
import { refuseWhole } from './declaration-refused';
import { formatPass } from './format-results';
import { HostCommand } from './host-command';

/** The declaration file could not be read. */
export class DeclarationFileUnreadable extends OperatorError {}

/**
 * `nox-mesh-host apply FILE`: apply a declaration by hand, at the machine (rescue, or a hosted
 * machine's own bundle). Actions are allowed: whoever can run this as root can do anything.
 */
export class ApplyCommand extends HostCommand {
  static override paths = [['apply']];
  static override usage = Command.Usage({
    description: 'Apply a declaration file by hand: {"resources": [...]}',
    details: `
      The resources are held from now on (corrected on every reconcile) alongside the
      controller's declaration, until the controller's next declaration arrives. Something the
      machine already has goes through adoption: its original is kept first, and where it
      differs the machine's value wins (see \`briefing\`). A file that does not match the
      contract, or that names something the host may not take (its own unit, launcher or
      resume unit, its state directory, a shape this host has no applier for), is refused
      whole: nothing is applied or held. A resource that fails, or whose original could not be
      kept or that could not be read, is not held either (what an earlier apply held for it
      stays): fix it and apply again.

      With --dry-run, nothing is written, run or held: each resource is looked at and what
      would change is printed (an action whose guard is a command is reported as one that
      would run, its guard not asked). It exits 0 whether or not something would change, and
      1 when something would be refused or cannot be read, as the apply itself would.
    `,
    examples: [
      ['Apply an example into a sandbox folder', '$0 apply examples/motd.json --root ./sandbox'],
      ['See what an apply would change, changing nothing', '$0 apply examples/motd.json --dry-run'],
      ['Replace everything applied by hand with this file', '$0 apply repair.json --replace'],
    ],
  });

  file = Option.String({ name: 'FILE' });
  replace = Option.Boolean('--replace', false, {
    description: 'Hold only this file\'s resources: what earlier hand applies held and this file does not name is removed',
  });
  dryRun = Option.Boolean('--dry-run', false, {
    description: 'Print what the apply would change, and change nothing: no file, no store write, no action run',
  });

  async run(): Promise<CommandResult> {
    const declaration = await readDeclaration(this.file);
    const hold = (state: HostState): HostState => {
      const named = new Set(declaration.resources.map(resourceKey));
      const kept = this.replace ? [] : state.local_resources.filter((resource) => !named.has(resourceKey(resource)));
      return { ...state, local_resources: [...kept, ...declaration.resources] };
    };
    if (this.dryRun) return this.planOn(hold, (appliers, ctx) => refuseWhole(declaration.resources, appliers, ctx, this.file));
    return this.withHost(async (host) => {
      refuseWhole(declaration.resources, host.appliers, applyContextOf(host), this.file);
      const before = host.state.current().local_resources;
      // Written with the pass's first store write (its marks), not alone before it: a host
      // killed before that write has made nothing new (adoption's kept originals are found
      // again), so the store is as it was before this apply, and honest.
      await host.state.stage(hold);
      setOnePassFlagsFor(host.state.current().local_resources.length + host.state.current().owned.resources.length);
      const report = await reconcilePass(host, ['declaration']);
      const dropped = notTaken(declaration.resources, report);
      if (dropped.size > 0) await host.state.update((state) => heldAgain(state, dropped, before));
      else await host.state.flush();
      const text = dropped.size === 0 ? formatPass(report) : `${formatPass(report)}\nnot held (fix and apply again): ${[...dropped].join(', ')}`;
      return { text, json: { ...report, not_held: [...dropped] }, exitCode: passFailed(report) ? 1 : 0 };
    });
  }
}

/** The keys of this declaration that failed, were refused, or that adoption could not resolve. */
function notTaken(resources: readonly Resource[], report: PassReport): Set<string> {
  const named = new Set(resources.map(resourceKey));
  const bad = report.results.filter((result) => result.outcome === 'failed' || result.outcome === 'refused').map((result) => result.key);
  return new Set([...bad, ...(report.unresolved ?? [])].filter((key) => named.has(key)));
}

/**
 * The hand-applied resources with those of `dropped` taken back to what was held for them
 * before this apply (or to nothing): a resource that did not take is not kept in the store to
 * fail again on every later pass. What the host made of it is left to the next pass, which
 * treats it as anything else the host owns or marked and no longer holds.
 */
function heldAgain(state: HostState, dropped: ReadonlySet<string>, before: readonly Resource[]): HostState {
  const earlier = new Map(before.map((resource) => [resourceKey(resource), resource]));
  const local = state.local_resources.flatMap((resource) => {
    const key = resourceKey(resource);
    if (!dropped.has(key)) return [resource];
    const previous = earlier.get(key);
    return previous === undefined ? [] : [previous];
  });
  return { ...state, local_resources: local };
}

async function readDeclaration(file: string): Promise<LocalDeclaration> {
  let text: string;
  try {
    // Refused before it is read, so a file of any size costs the host nothing.
    const { size } = await fs.stat(file);
    if (size > MAX_DECLARATION_BYTES) {
      throw new DeclarationFileUnreadable(`the declaration file is ${bytesText(size)}, over the ${bytesText(MAX_DECLARATION_BYTES)} a declaration may be`, {
        value: file,
        next: 'ship large files in a package rather than as content; nothing was applied',
      });
    }
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof DeclarationFileUnreadable) throw error;
    throw new DeclarationFileUnreadable(`cannot read the declaration file: ${(error as Error).message}`, {
      value: file,
      next: 'check the path; a declaration file is JSON: {"resources": [...]} (see examples/)',
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DeclarationFileUnreadable(`the declaration file is not JSON: ${(error as Error).message}`, {
      value: file,
      next: 'fix the file and run apply again; nothing was applied',
    });
  }
  const declaration = parseContract(LocalDeclaration, json, 'declaration', {
    next: `fix that field in ${file} and run apply again; nothing was applied`,
  });
  // Held in the store as they are: its check need not parse them a second time.
  vouchParsed(Resource, declaration.resources);
  return declaration;
}
