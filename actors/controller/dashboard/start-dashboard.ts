import { openControlLine } from '../control/call-controller';
import { drawDashboardCharts } from './dashboard-charts';
import { DashboardFeed } from './dashboard-feed';
import { parseDashboardListen } from './dashboard-listen';
import { startDashboardServer } from './dashboard-server';
import { LOGIN_LINK_TTL_MS, DashboardSessions } from './dashboard-sessions';
import { readDashboardSnapshot } from './dashboard-snapshot';

/** How long the dashboard waits for one answer of the controller. */
const CALL_TIMEOUT_MS = 5_000;

/** The dashboard, serving. */
export interface StartedDashboard {
  origin: string;
  /** The one-time login link. */
  loginUrl: string;
  loginExpiresAt: string;
  /** Rejects when the server fails while serving. */
  failed: Promise<never>;
  stop(): Promise<void>;
}

/**
 * The composition of `mesh-control dashboard`: checks `--listen`, connects to the broker as the
 * operator and asks the controller its status once (so a controller that is not serving is said
 * at once, with what to run, rather than shown as an empty page), draws the charts, and serves.
 * Nothing is left open when a step fails.
 */
export async function startDashboard(meshDir: string, listenText: string): Promise<StartedDashboard> {
  const listen = parseDashboardListen(listenText);
  const line = await openControlLine(meshDir, { timeoutMs: CALL_TIMEOUT_MS, reconnect: true });
  try {
    await line.call('status', {});
    const charts = await drawDashboardCharts();
    const feed = new DashboardFeed(() => readDashboardSnapshot((verb, args) => line.call(verb, args), charts, new Date()));
    const sessions = new DashboardSessions();
    const server = await startDashboardServer({ listen, sessions, feed, charts });
    const secret = sessions.issueLogin();
    return {
      origin: server.origin,
      loginUrl: `${server.origin}/login?secret=${secret}`,
      loginExpiresAt: new Date(Date.now() + LOGIN_LINK_TTL_MS).toISOString(),
      failed: server.failed,
      stop: async () => {
        feed.stop();
        await server.stop();
        await line.close();
      },
    };
  } catch (error) {
    await line.close();
    throw error;
  }
}
