import { Command, Option } from 'clipanion';
import { NodeName } from '../../../schema/primitives';
import { parseContract } from '../../../schema/parse';
import { SeatName } from '../../../schema/seat';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { callController } from '../control/call-controller';
import { SeatChangeUnclear } from '../seats/seat-errors';
import { ControllerCommand } from './controller-command';

/** `mesh-control seat NAME --add NODE | --remove NODE | --replicated | --single`: change one seat. */
export class SeatCommand extends ControllerCommand {
  static override paths = [['seat']];
  static override usage = Command.Usage({
    description: 'Give a seat a holder, take one away, or say whether several machines may hold it',
    details: `
      A seat is a role on the mesh held by one machine, or by several when it is replicated. A node holds it by hand (\`--add\`) or through a module assigned to it whose module.json says \`"seats": {"holds": ["NAME"]}\`; a module saying \`"needs": ["NAME"]\` is assigned only where some node holds it.

      Whether a seat is replicated is the operator's word (\`--replicated\`, \`--single\`), not a module's: how many machines hold a role is a fact of this mesh, and one module serves a one-machine mesh and a fleet alike. The resolver seat \`mesh-dns-resolver\` is replicated from the start: its holders run a DNS server answering mesh names on their overlay addresses, and every node's /etc/resolv.conf lists them and no public resolver.

      Refused, with nothing changed: a second holder of a seat that is not replicated; \`--single\` while several hold it; removing the last holder of a seat a module still needs (each is named). Every node is sent its declaration again, since each carries the roster of every replicated seat's holders.
    `,
    examples: [
      ['Two resolvers for the mesh', 'mesh-control seat mesh-dns-resolver --add alpha && mesh-control seat mesh-dns-resolver --add beta'],
      ['Let several machines hold a seat, and add one', 'mesh-control seat build-agent --replicated --add gamma --json'],
      ['Take a holder away', 'mesh-control seat mesh-dns-resolver --remove beta'],
    ],
  });

  seat = Option.String({ name: 'NAME' });
  add = Option.String('--add', { description: 'Make NODE a holder of the seat' });
  remove = Option.String('--remove', { description: 'Take NODE away from the seat (a holder added by hand)' });
  replicated = Option.Boolean('--replicated', { description: 'Let several machines hold it (--single: one)' });
  single = Option.Boolean('--single', { description: 'Let one machine hold it' });

  async run(): Promise<CommandResult> {
    const seat = parseContract(SeatName, this.seat, 'seat name', { next: 'list the seats with mesh-control seats' });
    if (this.replicated === true && this.single === true) throw new SeatChangeUnclear(seat, 'seat was given --replicated and --single at once');
    if (this.add === undefined && this.remove === undefined && this.replicated !== true && this.single !== true) throw new SeatChangeUnclear(seat, 'seat was given no change');
    const args: Record<string, unknown> = { seat };
    if (this.add !== undefined) args.add = parseContract(NodeName, this.add, 'node name', { next: 'list the nodes with mesh-control nodes' });
    if (this.remove !== undefined) args.remove = parseContract(NodeName, this.remove, 'node name', { next: 'list the seats and their holders with mesh-control seats' });
    if (this.replicated === true) args.replicated = true;
    if (this.single === true) args.replicated = false;
    const answer = await callController(this.meshDir(), 'seat', args);
    return { text: answer.text, json: answer.result };
  }
}

/** `mesh-control seats`: every seat, its holders and what needs it. */
export class SeatsCommand extends ControllerCommand {
  static override paths = [['seats']];
  static override usage = Command.Usage({
    description: 'List the seats: replicated or single, each holder (by hand or through a module) and its overlay address, and what needs each',
    details: `
      A holder that is not on the overlay (released, revoked, not enrolled yet) holds the seat in name only: nothing is composed from it, and it is shown so.
    `,
    examples: [
      ['Every seat', 'mesh-control seats'],
      ['For a script', 'mesh-control seats --json'],
    ],
  });

  async run(): Promise<CommandResult> {
    const answer = await callController(this.meshDir(), 'seats', {});
    return { text: answer.text, json: answer.result };
  }
}
