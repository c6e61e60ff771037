import http from 'node:http';
import net from 'node:net';
import type { DashboardChart, DashboardChartName } from './dashboard-charts';
import { DashboardListenFailed } from './dashboard-errors';
import type { DashboardFeed } from './dashboard-feed';
import { dashboardOrigin, type DashboardListen } from './dashboard-listen';
import { APP_CSS, APP_JS, INDEX_HTML, loginPage } from './dashboard-page';
import { sessionCookie, sessionFromCookie, type DashboardSessions } from './dashboard-sessions';

/** How often an open event stream is sent a comment, so proxies and browsers keep it open. */
const KEEPALIVE_MS = 15_000;

/** Headers on every answer: nothing cached, nothing framed, nothing loaded from elsewhere, no referrer (the login link carries a secret). */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
};

/** What the dashboard's HTTP server is given. */
export interface DashboardServerDeps {
  listen: DashboardListen;
  sessions: DashboardSessions;
  feed: DashboardFeed;
  charts: ReadonlyMap<DashboardChartName, DashboardChart>;
}

/** The dashboard's server, listening. */
export interface RunningDashboard {
  /** `http://127.0.0.1:PORT`, with the port it took. */
  origin: string;
  /** Rejects when the server fails after it started. */
  failed: Promise<never>;
  stop(): Promise<void>;
}

/**
 * The dashboard over HTTP, read-only: GET and HEAD only, and no route that changes anything.
 * Every request is first checked for its Host header, which must name the address listened on
 * (or localhost with its port): a page on another site that rebinds its own name to 127.0.0.1
 * gets 421 and nothing else. Then `/login?secret=…` exchanges the printed one-time secret for a
 * session cookie (HttpOnly, SameSite=Strict) and redirects to the page; any other request
 * without a live session gets the login page, status 401, whatever it asked for. With one:
 * the page, its script and style, the charts, `/snapshot.json` and `/events` (server-sent
 * events, one `snapshot` event per change).
 */
export async function startDashboardServer(deps: DashboardServerDeps): Promise<RunningDashboard> {
  const streams = new Set<http.ServerResponse>();
  let origin = '';
  let hosts = new Set<string>();
  const server = http.createServer((request, response) => {
    const send = (status: number, type: string, body: string, extra: Record<string, string> = {}): void => {
      response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...extra }).end(request.method === 'HEAD' ? undefined : body);
    };
    if (!hosts.has((request.headers.host ?? '').toLowerCase())) {
      send(421, 'text/plain; charset=utf-8', `this dashboard answers only as ${origin}\n`);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(405, 'text/plain; charset=utf-8', 'the dashboard only shows: GET and HEAD\n', { allow: 'GET, HEAD' });
      return;
    }
    const url = new URL(request.url ?? '/', origin);
    if (url.pathname === '/login') {
      const outcome = deps.sessions.login(url.searchParams.get('secret') ?? '');
      if (outcome.ok) {
        send(303, 'text/plain; charset=utf-8', 'logged in\n', { location: '/', 'set-cookie': sessionCookie(outcome.session) });
      } else {
        send(401, 'text/html; charset=utf-8', loginPage(outcome.why === 'used' ? 'That login link was used already.' : outcome.why === 'expired' ? 'That login link has expired.' : 'That is not a login link of this dashboard.'));
      }
      return;
    }
    // The stylesheet says nothing about the mesh, and the login page needs it.
    if (url.pathname === '/app.css') {
      send(200, 'text/css; charset=utf-8', APP_CSS);
      return;
    }
    if (!deps.sessions.holds(sessionFromCookie(request.headers.cookie))) {
      send(401, 'text/html; charset=utf-8', loginPage());
      return;
    }
    const chart = /^\/charts\/([a-z]+)\.svg$/.exec(url.pathname);
    if (chart !== null) {
      const found = deps.charts.get(chart[1] as DashboardChartName);
      if (found === undefined) send(404, 'text/plain; charset=utf-8', 'no such chart\n');
      else send(200, 'image/svg+xml; charset=utf-8', found.svg);
      return;
    }
    switch (url.pathname) {
      case '/':
        send(200, 'text/html; charset=utf-8', INDEX_HTML);
        return;
      case '/app.js':
        send(200, 'text/javascript; charset=utf-8', APP_JS);
        return;
      case '/snapshot.json':
        deps.feed.refresh().then(
          (snapshot) => send(200, 'application/json', JSON.stringify(snapshot ?? null)),
          () => send(500, 'text/plain; charset=utf-8', 'the mesh could not be read; mesh-control dashboard printed why\n'),
        );
        return;
      case '/events': {
        response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
        response.write('retry: 1000\n\n');
        streams.add(response);
        const leave = deps.feed.join({ send: (json) => response.write(`event: snapshot\ndata: ${json}\n\n`) });
        const keepalive = setInterval(() => response.write(': still here\n\n'), KEEPALIVE_MS);
        request.on('close', () => {
          clearInterval(keepalive);
          leave();
          streams.delete(response);
        });
        return;
      }
      default:
        send(404, 'text/plain; charset=utf-8', 'not found: the dashboard is at /\n');
    }
  });
  server.headersTimeout = 10_000;
  const address = `${deps.listen.host}:${deps.listen.port}`;
  await new Promise<void>((resolve, reject) => {
    const refused = (error: NodeJS.ErrnoException): void => {
      reject(new DashboardListenFailed(address, error.code === 'EADDRINUSE' ? 'the port is in use' : error.code === 'EADDRNOTAVAIL' ? 'the address is not one of this machine\'s' : error.code === 'EACCES' ? 'not allowed to bind it' : error.message, error));
    };
    server.once('error', refused);
    server.listen(deps.listen.port, deps.listen.host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  origin = dashboardOrigin(deps.listen.host, port);
  hosts = new Set([new URL(origin).host, `localhost:${port}`]);
  const failed = new Promise<never>((_, reject) => {
    server.once('error', (error) => reject(new DashboardListenFailed(address, error.message, error)));
  });
  failed.catch(() => undefined);
  return {
    origin,
    failed,
    stop: async () => {
      for (const stream of streams) stream.end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
