import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { serveController } from '../serve/serve-controller';
import { waitForStopSignal } from '../serve/wait-for-stop-signal';
import { ControllerCommand } from './controller-command';

/** The controller's broker connection closed for good while it was serving. */
export class ControllerConnectionLost extends OperatorError {}

/** `mesh-control serve`: the controller, serving until stopped. */
export class ServeCommand extends ControllerCommand {
  static override paths = [['serve']];
  static override usage = Command.Usage({
    description: 'Run the controller: answer control calls and run its parts until stopped',
    details: `
      Opens the store, connects to the broker as the controller, and answers the CLI's verbs (token issue, nodes, …) over the broker. Logs one line per event to standard error. SIGTERM or SIGINT stops it cleanly (exit 0).

      The broker must be running first: \`mesh-control broker --dir DIR\`.
    `,
  });

  async run(): Promise<CommandResult> {
    // Taken before starting, so a stop asked for while starting is a clean stop once started.
    const stopping = new AbortController();
    const stopSignal = waitForStopSignal(stopping.signal);
    let serving;
    try {
      serving = await serveController(this.meshDir());
    } catch (error) {
      stopping.abort();
      throw error;
    }
    const ended = await Promise.race([
      stopSignal.then((signal) => ({ signal })),
      serving.ctx.nc.closed().then((error) => ({ closed: error ?? undefined })),
    ]);
    stopping.abort();
    await serving.stop();
    if ('signal' in ended) return { text: '', json: { stopped: true, signal: ended.signal } };
    throw new ControllerConnectionLost('the controller\'s connection to the broker closed and will not come back', {
      ...(ended.closed === undefined ? {} : { value: ended.closed.message }),
      next: 'check the broker is running (mesh-control broker) and still lets the controller in, then start the controller again',
      cause: ended.closed,
    });
  }
}
