import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { controllerTimingsFromEnvironment } from '../serve/controller-timings';
import { serveController } from '../serve/serve-controller';
import { waitForStopSignal } from '../serve/wait-for-stop-signal';
import { ControllerCommand } from './controller-command';

/** `mesh-control serve`: the controller, serving until stopped. */
export class ServeCommand extends ControllerCommand {
  static override paths = [['serve']];
  static override usage = Command.Usage({
    description: 'Run the controller: take the lease, answer control calls and run its parts until stopped',
    details: `
      Opens the store, connects to the broker as the controller and tries for the lease (the KV bucket mesh-controller_lease). The holder acts: it answers the CLI's verbs (token issue, nodes, status, …) over the broker and sends declarations; any other serving controller stands by and takes over when the holder gives the lease back or it expires (15 s). Logs one line per event to standard error.

      SIGTERM or SIGINT stops it cleanly, giving the lease back (exit 0). It exits non-zero when one of its parts keeps failing (naming it and its last error) or when it lost the lease, for its service manager to start it again.

      The broker must be running first: \`mesh-control broker --dir DIR\`.
    `,
  });

  async run(): Promise<CommandResult> {
    // Taken before starting, so a stop asked for while starting is a clean stop once started.
    const stopping = new AbortController();
    const stopSignal = waitForStopSignal(stopping.signal);
    let serving;
    try {
      serving = await serveController(this.meshDir(), controllerTimingsFromEnvironment(process.env));
    } catch (error) {
      stopping.abort();
      throw error;
    }
    const outcome = await Promise.race([stopSignal.then((signal) => ({ signal })), serving.ended.then((error) => ({ error }))]);
    stopping.abort();
    if ('error' in outcome) throw outcome.error;
    await serving.stop();
    return { text: '', json: { stopped: true, signal: outcome.signal } };
  }
}
