import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { readModuleSource } from '../modules/read-module-source';
import { ControllerCommand } from './controller-command';

/** `mesh-control module add PATH`: register a module, or a new revision of one. */
export class ModuleAddCommand extends ControllerCommand {
  static override paths = [['module', 'add']];
  static override usage = Command.Usage({
    description: 'Register a module (module.json, or a folder holding one), or a new revision of it',
    details: `
      module.json: \`{"name": "web", "version": "1.2.0", "upgrade_policy": "one-first", "resources": [...]}\`. The resources take the same form as \`node declare\`; a file's content may also be \`{"file": "relative/path"}\`, read from beside module.json, or \`{"secret": "NAME"}\`, a secret kept with \`mesh-control secret set\` and sent to each node sealed to its key (such a file must say its \`owner\` and a \`mode\` closed to other accounts).

      \`"seats": {"holds": ["NAME"], "needs": ["NAME"]}\` (optional): a node it is assigned to holds each seat it holds, and it is assigned only where each seat it needs has a holder (see \`mesh-control seat --help\`).

      A later revision must carry a higher version. Nodes already running the module get it by its upgrade policy: \`one-first\` (the default) sends the first machine by name among those heard from lately, and the rest once its report says it applied; \`together\` sends every node at once; \`record\` holds it until \`push NODE\` or \`push\` sends it. Follow a rollout with \`mesh-control plans\`.

      Refused, with nothing registered: a version not above the registered one, and a revision that would declare the same path, package, unit or container as another module on a node running it.
    `,
    examples: [
      ['Register the module in ./web', 'mesh-control module add ./web'],
      ['Register a single module file', 'mesh-control module add web/module.json'],
    ],
  });

  source = Option.String({ name: 'PATH' });

  async run(): Promise<CommandResult> {
    const { manifest, file } = await readModuleSource(this.source);
    const answer = await callController(this.meshDir(), 'module.add', { module: manifest, source: file });
    return { text: answer.text, json: answer.result };
  }
}
