import { promises as fs } from 'node:fs';
import { Command, Option } from 'clipanion';
import { LocalDeclaration } from '../../../schema/local-declaration';
import { parseContract } from '../../../schema/parse';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { callController } from '../control/call-controller';
import { ControllerCommand } from './controller-command';

/** The declaration file given to `node declare` could not be read as JSON. */
export class DeclarationFileUnreadable extends OperatorError {}

/** `mesh-control node declare NAME FILE`: what a node holds beside its overlay. */
export class NodeDeclareCommand extends ControllerCommand {
  static override paths = [['node', 'declare']];
  static override usage = Command.Usage({
    description: 'Declare what a node holds beside its overlay, and send it',
    details: `
      FILE is JSON: \`{"resources": [...]}\`, the same form \`nox-mesh-host apply\` takes (files, directories, packages, containers, services, actions). It replaces what was declared for the node before; what is no longer declared is removed by the node.

      The node gets it in its full declaration, signed, as the next generation. A node that has not yet reported its overlay applied gets it once it has: the overlay always comes first.
    `,
    examples: [['Give node web its files and services', 'mesh-control node declare web web.json']],
  });

  node = Option.String({ name: 'NAME' });
  file = Option.String({ name: 'FILE' });

  async run(): Promise<CommandResult> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (error) {
      throw new DeclarationFileUnreadable('the declaration file could not be read', { value: this.file, next: 'check the path and that the file is readable', cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new DeclarationFileUnreadable(`the declaration file is not JSON (${(error as Error).message})`, { value: this.file, next: 'write it as {"resources": [...]}', cause: error });
    }
    // Checked here first, so a mistake is named by its place in the file without a round trip.
    const declaration = parseContract(LocalDeclaration, json, 'declaration', { next: `fix that field in ${this.file} and run this again` });
    const answer = await callController(this.meshDir(), 'node.declare', { node: this.node, resources: declaration.resources });
    return { text: answer.text, json: answer.result };
  }
}
