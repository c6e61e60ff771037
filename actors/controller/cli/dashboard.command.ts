import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { waitForStopSignal } from '../serve/wait-for-stop-signal';
import { ControllerCommand } from './controller-command';

/** `mesh-control dashboard`: a read-only web page of the mesh, live, on a loopback address. */
export class DashboardCommand extends ControllerCommand {
  static override paths = [['dashboard']];
  static override usage = Command.Usage({
    description: 'Serve a live, read-only web page of the mesh on 127.0.0.1, drawn on the machines\' own state charts',
    details: `
      Shows every node (state, kind, version, address, last seen, since when it is away, open conditions) on the lifecycle chart with its state lit, the plans with their tiers on the plan chart, the lease holder and epoch on the lease chart, the supervision tree, and the latest reports and refusals. The page updates itself within a second of a change, through server-sent events; it changes nothing in the mesh.

      It asks the serving controller over the broker as the operator, as the other verbs do, so run it where the mesh directory is and \`mesh-control serve\` answers. It prints a login link that works once, for fifteen minutes: opening it gives the browser a session cookie (HttpOnly, SameSite=Strict) for twelve hours. Without one, every address answers only the login page. Run the verb again for a new link.

      It listens on loopback only (the page is plain HTTP); from another machine, forward the port: \`ssh -L 8470:127.0.0.1:8470 HOST\`. Under \`--json\` it prints one JSON line with the addresses at start and one when it stops. SIGTERM or SIGINT stops it.
    `,
    examples: [
      ['Serve the dashboard on 127.0.0.1:8470', 'mesh-control dashboard'],
      ['On another port, printing the login link as JSON', 'mesh-control dashboard --listen 127.0.0.1:9000 --json'],
    ],
  });

  listen = Option.String('--listen', '127.0.0.1:8470', { description: 'The loopback address and port to serve on (HOST:PORT, [::1]:PORT or a bare PORT; 0 takes a free one)' });

  protected override jsonLines(): boolean {
    return true;
  }

  async run(): Promise<CommandResult> {
    // Loaded here, not with the file: the page, the charts' drawing and Graphviz are for this verb alone.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startDashboard } = require('../dashboard/start-dashboard') as typeof import('../dashboard/start-dashboard');
    const stopping = new AbortController();
    const stopSignal = waitForStopSignal(stopping.signal);
    let dashboard;
    try {
      dashboard = await startDashboard(this.meshDir(), this.listen);
    } catch (error) {
      stopping.abort();
      throw error;
    }
    const started = { url: `${dashboard.origin}/`, login_url: dashboard.loginUrl, login_expires_at: dashboard.loginExpiresAt };
    this.context.stdout.write(this.json
      ? `${JSON.stringify(started)}\n`
      : `dashboard: ${started.url} (read-only; Ctrl-C stops it)\nlog in with this link, once, before ${started.login_expires_at}:\n  ${started.login_url}\n`);
    const outcome = await Promise.race([stopSignal.then((signal) => ({ signal })), dashboard.failed.catch((error: unknown) => ({ error }))]);
    stopping.abort();
    await dashboard.stop();
    if ('error' in outcome) throw outcome.error;
    return { text: '', json: { stopped: true, signal: outcome.signal } };
  }
}
