import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { controllerLog, parseLogFormat, parseLogLevel } from '../logs/controller-log';
import { parseMetricsListen } from '../metrics/metrics-listen';
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
      Opens the store, connects to the broker as the controller and tries for the lease (the KV bucket mesh-controller_lease). The holder acts: it answers the CLI's verbs (token issue, nodes, status, …) over the broker and sends declarations; any other serving controller stands by and takes over when the holder gives the lease back or it expires (15 s). Logs one line per event to standard error: the time and a sentence, or with \`--log-format json\` one JSON object per line (level, time, msg and the event's fields); \`--log-level warn\` keeps only warnings and errors.

      With \`--metrics-listen 127.0.0.1:9464\` it answers GET /metrics for Prometheus there: nodes and plans by state, declarations sent, reports kept and refused, declarations hosts refused, bus repairs, the lease epoch and renewals, and the process's own figures. Off unless given: an open port is the operator's choice, and a standby on the same machine needs a port of its own. The endpoint has no password, so only a loopback address is taken unless \`--metrics-allow-remote\` says other machines are meant to scrape it.

      SIGTERM or SIGINT stops it cleanly, giving the lease back (exit 0). It exits non-zero when one of its parts keeps failing (naming it and its last error) or when it lost the lease, for its service manager to start it again.

      The broker must be running first: \`mesh-control broker --dir DIR\`.
    `,
  });

  logFormat = Option.String('--log-format', 'human', { description: 'human (default): the time and a sentence per line; json: one JSON object per line' });

  logLevel = Option.String('--log-level', 'info', { description: 'The least urgent level logged: debug, info (default), warn or error' });

  metricsListen = Option.String('--metrics-listen', { description: 'Serve Prometheus metrics at http://HOST:PORT/metrics (a loopback address such as 127.0.0.1:9464); none unless given' });

  metricsAllowRemote = Option.Boolean('--metrics-allow-remote', false, { description: 'Let --metrics-listen name an address other machines can reach (the endpoint has no password)' });

  async run(): Promise<CommandResult> {
    // Read before anything is opened: a bad value is refused whole, with nothing started.
    const log = controllerLog({ format: parseLogFormat(this.logFormat), level: parseLogLevel(this.logLevel) });
    const metrics = this.metricsListen === undefined ? undefined : { listen: parseMetricsListen(this.metricsListen, { allowRemote: this.metricsAllowRemote }) };
    // Taken before starting, so a stop asked for while starting is a clean stop once started.
    const stopping = new AbortController();
    const stopSignal = waitForStopSignal(stopping.signal);
    let serving;
    try {
      serving = await serveController(this.meshDir(), { ...controllerTimingsFromEnvironment(process.env), log, ...(metrics === undefined ? {} : { metrics }) });
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
