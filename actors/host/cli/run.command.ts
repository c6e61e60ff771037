import { Command } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { runnerFrom } from '../profile/runner-context';
import { streamLog } from '../run/host-log';
import { runHost } from '../run/run-host';
import { HostCommand, nodeSetupOf } from './host-command';

/**
 * `nox-mesh-host run`: the host process, as the service starts it. Runs until SIGTERM or
 * SIGINT, then stops between resources, sends what is queued, and exits 0.
 */
export class RunCommand extends HostCommand {
  static override paths = [['run']];
  static override usage = Command.Usage({
    description: 'Run the host: hold this machine to its declarations and report upward',
    details: `
      Enrolled, it connects out to the broker (checking the pinned certificate first), takes
      this node's declarations as they arrive — each verified against the controller's key and
      refused, and reported, when it is not newer than what the host holds — applies them,
      reconciles every ten minutes, and reports each pass. Not enrolled yet, it waits for
      nox-mesh-host enrol without holding the store. It opens no listening socket; it keeps
      host-status.json in its state directory up to date, which nox-mesh-host status and
      nox-mesh-host tree read. Log lines
      go to standard output; with --json, one JSON object per line (NDJSON), down to the last
      ({"stopped": true}) or the error that stopped it.
    `,
  });

  /** Under `--json`, everything `run` prints is one object per line, its end and its failure too. */
  protected override jsonLines(): boolean {
    return true;
  }

  async run(): Promise<CommandResult> {
    const settings = await this.settings();
    const runner = runnerFrom(this.context);
    const log = streamLog(this.context.stdout, this.json);
    const stop = new AbortController();
    const onSignal = (): void => stop.abort();
    // Node answers an unhandled SIGUSR1 by starting its inspector: a listening socket that runs
    // any code sent to it. The pidfile invites SIGUSR1 (a rouse from the resume unit or the
    // network dispatcher), so a handler is installed before anything else happens and stays for
    // the life of the process; the link hears rouses through its own listener (signalRouses).
    const onRouse = (): void => undefined;
    process.on('SIGUSR1', onRouse);
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      await runHost({
        settings,
        // Made once the store is first opened: a machine waiting to be enrolled never needs it.
        node: () => nodeSetupOf(settings, runner),
        log,
        signal: stop.signal,
      });
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.off('SIGUSR1', onRouse);
    }
    return { text: '', json: { stopped: true } };
  }
}
