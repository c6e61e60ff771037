import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { checkHandAct } from '../hand-acts/hand-act-args';
import { ControllerCommand } from './controller-command';

/** `mesh-control node revoke NAME [--why TEXT]`: cut off a node that is gone (stolen, dead). */
export class NodeRevokeCommand extends ControllerCommand {
  static override paths = [['node', 'revoke']];
  static override usage = Command.Usage({
    description: 'Cut off a gone node at once: remove its broker identity and list what the mesh issued for it',
    details: `
      For a machine that is gone (stolen, dead, given away) and cannot be released: its broker user is removed and its connection dropped at once, every enrolment token still open for it is ended, its peers are sent an overlay without it, and \`mesh-control nodes\` shows it revoked. Every credential the mesh issued for the node is listed, with what became of it. The record stays; \`mesh-control node release NAME\` retires it. The revocation is kept in the hand-act log (\`mesh-control hand-acts\`) with \`--why\` and \`--condition\` when given.

      A revocation is never refused for a seat: when the node was the last holder on the mesh of a seat a module still needs, it goes through, and the output ends with a warning naming each such seat and what needs it; \`mesh-control status\` names them until a holder is added (\`mesh-control seat NAME --add NODE\`).

      Its host, if it still runs, finds the broker refusing it, says so, and lets go of its store, so the machine can be enrolled again (\`mesh-control token issue --node NAME\`, then \`nox-mesh-host enrol --token …\`) without stopping the host first.
    `,
    examples: [
      ['Revoke a stolen laptop', 'mesh-control node revoke laptop-7 --why "stolen from the car, 2026-12-03"'],
      ['The same, as JSON', 'mesh-control node revoke laptop-7 --json'],
    ],
  });

  node = Option.String({ name: 'NAME' });
  why = Option.String('--why', { description: 'Why the node is revoked, in a line: kept on its record and in the hand-act log' });
  condition = Option.String('--condition', { description: 'The id of the condition this answers (mesh-control conditions)' });

  async run(): Promise<CommandResult> {
    checkHandAct('node revoke', { condition: this.condition }, false);
    const answer = await callController(this.meshDir(), 'node.revoke', {
      node: this.node,
      ...(this.why === undefined ? {} : { why: this.why }),
      ...(this.condition === undefined ? {} : { condition: this.condition }),
    });
    return { text: answer.text, json: answer.result };
  }
}
