import http from 'node:http';
import type { DashboardChart, DashboardChartName } from './dashboard-charts';
import { DashboardFeed } from './dashboard-feed';
import { startDashboardServer, type RunningDashboard } from './dashboard-server';
import { DashboardSessions } from './dashboard-sessions';
import type { DashboardSnapshot } from './dashboard-snapshot';

// The server over real HTTP on an ephemeral port, fed by a feed whose reading the test sets.

function snapshotWith(names: string[]): DashboardSnapshot {
  return {
    read_at: new Date().toISOString(),
    controller: 'test:1',
    status_composed_at: null,
    lease: { standing: 'acting', holder: 'test:1', holder_since: null, epoch: 3, epoch_floor: 3, note: null, chart: [] },
    nodes: names.map((name) => ({ name, lifecycle_state: 'enrolled', host_kind: 'resident', version_running: '0.1.0', address: null, last_seen_at: null, last_seen: 'never seen', disconnected_since: null, conditions: [], chart: [] })),
    plans: [],
    tree: null,
    reports: [],
    refusals: { reports: [], declarations: [] },
    problems: [],
    errors: [],
  };
}

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

function request(url: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = http.request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** Reads server-sent events from `url` until `enough` says so. */
function readEvents(url: string, cookie: string, enough: (events: string[]) => boolean): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const sent = http.get(url, { headers: { cookie } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        const events = text.split('\n\n').filter((block) => block.startsWith('event: snapshot')).map((block) => block.replace(/^event: snapshot\ndata: /, ''));
        if (enough(events)) {
          sent.destroy();
          resolve(events);
        }
      });
    });
    sent.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
  });
}

describe('the dashboard server', () => {
  let names = ['kitchen', 'attic'];
  const feed = new DashboardFeed(async () => snapshotWith(names), 20);
  const sessions = new DashboardSessions();
  const charts = new Map<DashboardChartName, DashboardChart>([['lifecycle', { name: 'lifecycle', svg: '<svg><g class="node"><title>lifecycle.hosted</title></g></svg>', model: { id: 'lifecycle', description: undefined, root: { id: 'lifecycle', key: 'lifecycle', kind: 'compound', description: undefined, invokes: [], initial: undefined, children: [] }, transitions: [] } }]]);
  let server: RunningDashboard;
  let cookie = '';

  beforeAll(async () => {
    server = await startDashboardServer({ listen: { host: '127.0.0.1', port: 0 }, sessions, feed, charts });
  });

  afterAll(async () => {
    feed.stop();
    await server.stop();
  });

  test('a request without a session gets the login page whatever it asks for, and nothing of the mesh', async () => {
    for (const path of ['/', '/events', '/snapshot.json', '/charts/lifecycle.svg', '/app.js', '/x']) {
      const answer = await request(`${server.origin}${path}`);
      expect({ path, status: answer.status }).toEqual({ path, status: 401 });
      expect(answer.body).toContain('shows nothing until you log in');
      expect(answer.body).not.toContain('kitchen');
    }
  });

  test('a Host header other than the address listened on gets 421 before anything else, login included', async () => {
    const secret = sessions.issueLogin();
    const port = new URL(server.origin).port;
    const answer = await request(`${server.origin}/login?secret=${secret}`, { headers: { host: `rebound.example:${port}` } });
    expect(answer.status).toBe(421);
    expect(answer.headers['set-cookie']).toBeUndefined();
    // The secret was not spent by the refused request.
    expect(sessions.login(secret).ok).toBe(true);
  });

  test('the login link sets an HttpOnly SameSite=Strict cookie and redirects to the page; a second use is refused', async () => {
    const secret = sessions.issueLogin();
    const answer = await request(`${server.origin}/login?secret=${secret}`);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe('/');
    const [setCookie] = answer.headers['set-cookie'] ?? [];
    expect(setCookie).toMatch(/HttpOnly; SameSite=Strict/);
    cookie = (setCookie ?? '').split(';')[0] ?? '';
    expect((await request(`${server.origin}/login?secret=${secret}`)).body).toContain('used already');
    const page = await request(`${server.origin}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.body).toContain('<script src="/app.js"');
    expect((await request(`${server.origin}/charts/lifecycle.svg`, { headers: { cookie } })).body).toContain('<title>lifecycle.hosted</title>');
    expect((await request(`${server.origin}/localhost`, { headers: { cookie, host: `localhost:${new URL(server.origin).port}` } })).status).toBe(404);
  });

  test('nothing but GET and HEAD is answered: the page changes nothing', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) expect((await request(`${server.origin}/`, { method, headers: { cookie } })).status).toBe(405);
  });

  test('the event stream sends the snapshot at once and again when the mesh changes', async () => {
    const events = readEvents(`${server.origin}/events`, cookie, (seen) => seen.some((json) => json.includes('"cellar"')));
    await new Promise((resolve) => setTimeout(resolve, 100));
    names = ['kitchen', 'attic', 'cellar'];
    const seen = await events;
    expect((JSON.parse(seen[0] ?? '{}') as DashboardSnapshot).nodes.map((node) => node.name)).toEqual(['kitchen', 'attic']);
    expect((JSON.parse(seen.at(-1) ?? '{}') as DashboardSnapshot).nodes.map((node) => node.name)).toEqual(['kitchen', 'attic', 'cellar']);
  });
});
