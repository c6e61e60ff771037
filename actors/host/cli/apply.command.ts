import * as fs from '../../shared/fs/promised-fs';
import { Command, Option } from 'clipanion';
import { bytesText, MAX_DECLARATION_BYTES } from '../../../schema/bounds';
import { LocalDeclaration } from '../../../schema/local-declaration';
import { parseContract } from '../../../schema/parse';
import { resourceKey } from '../../../schema/resource';
import { OperatorError } from '../../shared/operator-error';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { reconcilePass } from '../reconcile/reconcile-pass';
import { anyFailed, formatPass } from './format-results';
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
      contract is refused whole: nothing is applied.
    `,
    examples: [
      ['Apply an example into a sandbox folder', '$0 apply examples/motd.json --root ./sandbox'],
      ['Replace everything applied by hand with this file', '$0 apply repair.json --replace'],
    ],
  });

  file = Option.String({ name: 'FILE' });
  replace = Option.Boolean('--replace', false, {
    description: 'Hold only this file\'s resources: what earlier hand applies held and this file does not name is removed',
  });

  async run(): Promise<CommandResult> {
    const declaration = await readDeclaration(this.file);
    return this.withHost(async (host) => {
      await host.state.update((state) => {
        const named = new Set(declaration.resources.map(resourceKey));
        const kept = this.replace ? [] : state.local_resources.filter((resource) => !named.has(resourceKey(resource)));
        return { ...state, local_resources: [...kept, ...declaration.resources] };
      });
      const report = await reconcilePass(host, ['declaration']);
      return { text: formatPass(report), json: report, exitCode: anyFailed(report) ? 1 : 0 };
    });
  }
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
  return parseContract(LocalDeclaration, json, 'declaration', {
    next: `fix that field in ${file} and run apply again; nothing was applied`,
  });
}
