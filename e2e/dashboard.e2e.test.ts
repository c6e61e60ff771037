import { promises as fs } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestPostgres, type TestPostgres } from '../actors/shared/testing/test-postgres';
import { MeshRig, REPO_DIR } from './mesh-rig';
import { RigProcess } from './rig-process';
import { succeeded } from './run-cli';

// The dashboard as an operator meets it, in a real browser: Debian's chromium, headless, driven
// by playwright-core, against a mesh of real processes (a broker, `mesh-control serve` on
// PostgreSQL, four `nox-mesh-host run`) and `mesh-control dashboard` as its own process. Timings
// are short (hosts beat every 300 ms, a resident node is away after 1 s × 3), so a host stopped
// is shown disconnected in seconds. Screenshots go to .test-results/dashboard/ (or
// $MESH_E2E_OUTPUT): the page logged out, with three nodes, four, one away, one released.

const TIMINGS: Record<string, string> = {
  MESH_HOST_TIMINGS: 'heartbeat=300ms',
  MESH_CONTROLLER_TIMINGS: 'presence=200ms heartbeat_resident=1s',
};
const CHROMIUM = process.env.MESH_E2E_CHROMIUM ?? '/usr/bin/chromium';
const OUTPUT = process.env.MESH_E2E_OUTPUT ?? path.join(REPO_DIR, '.test-results', 'dashboard');
const LOGIN_TEXT = 'This dashboard shows nothing until you log in.';

/** GET `url` without a browser, with the Host header given (the URL's own by default). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }));
    });
    request.on('error', reject);
  });
}

describe('the dashboard in a real browser, on a real mesh', () => {
  let parent: string;
  let postgres: TestPostgres | undefined;
  let rig: MeshRig;
  let dashboard: RigProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let origin: string;
  let loginUrl: string;

  const card = (name: string): string => `article.card[data-node="${name}"]`;
  const litIn = (name: string): Promise<string[]> =>
    page.$$eval(`${card(name)} .chart g.node.lit > title`, (titles) => titles.map((title) => title.textContent ?? ''));
  const shoot = (name: string): Promise<Buffer> => page.screenshot({ path: path.join(OUTPUT, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    await fs.mkdir(OUTPUT, { recursive: true });
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'mesh-e2e-dashboard-'));
    postgres = await startTestPostgres();
    rig = new MeshRig({ dir: parent, hosts: ['alpha', 'bravo', 'charlie', 'delta'], database: postgres.url, env: TIMINGS });
    await rig.start();
    for (const name of ['alpha', 'bravo', 'charlie']) await rig.enrol(name, (await rig.issueToken({ new: true })).token);
    dashboard = new RigProcess({
      label: 'dashboard',
      argv: [process.execPath, path.join(REPO_DIR, 'bin', 'mesh-control'), 'dashboard', '--listen', '127.0.0.1:0', '--json', '--dir', rig.meshDir],
      cwd: REPO_DIR,
      logFile: path.join(rig.logDir, 'dashboard.log'),
    });
    const started = await dashboard.waitFor(/^(\{"url".*\})$/m, { timeoutMs: 30_000 });
    const said = JSON.parse(started[1] ?? '{}') as { url: string; login_url: string };
    origin = said.url.replace(/\/$/, '');
    loginUrl = said.login_url;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
    await rig?.stop();
    await postgres?.stop();
    if (parent !== undefined && process.env.MESH_E2E_KEEP === undefined) await fs.rm(parent, { recursive: true, force: true });
  }, 60_000);

  test('a request without the credential gets the login page and nothing of the mesh', async () => {
    for (const where of ['/', '/events', '/snapshot.json', '/charts/lifecycle.svg', '/app.js', '/nowhere']) {
      const answer = await get(`${origin}${where}`);
      expect({ where, status: answer.status }).toEqual({ where, status: 401 });
      expect(answer.body).toContain(LOGIN_TEXT);
      for (const name of ['alpha', 'bravo', 'charlie']) expect(answer.body).not.toContain(name);
    }
    const forged = await get(`${origin}/snapshot.json`, { cookie: 'mesh_dashboard=made-up' });
    expect(forged.status).toBe(401);
    await page.goto(`${origin}/`);
    await expect(page.textContent('body')).resolves.toContain(LOGIN_TEXT);
    await shoot('1-logged-out');
  });

  test('a page on another name that points at this address (DNS rebinding) gets nothing', async () => {
    const port = new URL(origin).port;
    const rebound = await get(`${origin}/login?secret=${new URL(loginUrl).searchParams.get('secret')}`, { host: `attacker.example:${port}` });
    expect(rebound.status).toBe(421);
    expect(rebound.headers['set-cookie']).toBeUndefined();
    expect(rebound.body).not.toContain('alpha');
  });

  test('the login link logs in once, with an HttpOnly SameSite=Strict cookie, and shows three nodes enrolled on their charts', async () => {
    await page.goto(loginUrl);
    expect(new URL(page.url()).pathname).toBe('/');
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'mesh_dashboard', httpOnly: true, sameSite: 'Strict' });
    const again = await get(loginUrl);
    expect(again.status).toBe(401);
    expect(again.body).toContain('used already');

    for (const name of ['alpha', 'bravo', 'charlie']) await page.waitForSelector(`${card(name)}[data-state="enrolled"]`);
    expect(await page.$$eval('article.card', (cards) => cards.map((one) => one.getAttribute('data-node')))).toEqual(['alpha', 'bravo', 'charlie']);
    expect(await litIn('bravo')).toEqual(['lifecycle.enrolled.operating']);
    await expect(page.textContent(`${card('alpha')} [data-field="last-seen"]`)).resolves.toMatch(/last seen/);
    // The lease: this controller holds it, under an epoch, lit on the lease chart.
    await expect(page.textContent('#lease [data-field="epoch"]')).resolves.toMatch(/^\d+$/);
    expect(await page.$$eval('#lease-chart g.node.lit > title', (titles) => titles.map((title) => title.textContent))).toEqual(expect.arrayContaining([expect.stringMatching(/^lease\.holding\./)]));
    await expect(page.textContent('#tree')).resolves.toContain('lease');
    await page.waitForSelector('#reports tbody tr');
    await shoot('2-three-nodes');
    // How long one reading of the whole mesh takes (five query verbs side by side): said, not asserted.
    const began = Date.now();
    await page.evaluate("fetch('/snapshot.json').then((response) => response.json())");
    process.stdout.write(`dashboard: one reading of the mesh took ${Date.now() - began} ms\n`);
  }, 60_000);

  test('a fourth machine enrolled appears without a reload', async () => {
    // A mark left in the page: still there after the node appears, so the page was not reloaded.
    await page.evaluate('window.marker = true');
    await rig.enrol('delta', (await rig.issueToken({ new: true })).token);
    const enrolled = Date.now();
    await page.waitForSelector(`${card('delta')}[data-state="enrolled"]`, { timeout: 30_000 });
    process.stdout.write(`dashboard: delta shown ${Date.now() - enrolled} ms after its enrolment returned\n`);
    expect(await page.evaluate('window.marker')).toBe(true);
    await shoot('3-four-nodes');
  }, 60_000);

  test('a host stopped is shown disconnected, since when, on its chart', async () => {
    await rig.stopHost('charlie');
    await page.waitForSelector(`${card('charlie')}[data-state="disconnected"]`, { timeout: 30_000 });
    await page.waitForSelector(`${card('charlie')} .chart[data-lit="lifecycle.disconnected"]`);
    expect(await litIn('charlie')).toEqual(['lifecycle.disconnected']);
    await expect(page.textContent(`${card('charlie')} [data-field="disconnected-since"]`)).resolves.not.toBe('—');
    await shoot('4-one-away');
  }, 60_000);

  test('a node released moves on its chart from enrolled to hosted', async () => {
    expect(await litIn('bravo')).toEqual(['lifecycle.enrolled.operating']);
    succeeded(await rig.control(['node', 'release', 'bravo']));
    await page.waitForSelector(`${card('bravo')}[data-state="released"]`, { timeout: 30_000 });
    await page.waitForSelector(`${card('bravo')} .chart[data-lit="lifecycle.hosted"]`);
    expect(await litIn('bravo')).toEqual(['lifecycle.hosted']);
    await shoot('5-one-released');
    // The top of the page, as docs/dashboard.png shows it in the README.
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard.png') });
  }, 60_000);

  test('SIGTERM stops it cleanly, saying so, and the page is gone', async () => {
    const exit = await dashboard?.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(dashboard?.output()).toMatch(/^\{"stopped":true,"signal":"SIGTERM"\}$/m);
    await expect(get(`${origin}/`)).rejects.toThrow(/ECONNREFUSED/);
  }, 30_000);
});
