import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGING, ROUSE_INSTALLED, SignalRecorder, runScript } from './rouse-stand-in';

// The resume unit checked by the real systemd-analyze and enabled by the real systemctl in a
// temporary root, and its command and the elogind hook run against a real stand-in host. No
// machine is suspended: what runs after waking is what is checked.

const exec = promisify(execFile);
const UNIT_NAME = 'nox-mesh-host-resume.service';
const UNIT = path.join(PACKAGING, UNIT_NAME);
const ELOGIND_HOOK = path.join(PACKAGING, 'nox-mesh-host-resume.elogind');
const ROUSE = path.join(PACKAGING, 'nox-mesh-host-rouse');
const SLEEP_TARGETS = ['suspend.target', 'hibernate.target', 'hybrid-sleep.target', 'suspend-then-hibernate.target'];
const SYSTEM_UNITS = '/usr/lib/systemd/system';

/** The values of `key` in `section` of a unit file, each line's words in order. */
function unitValues(text: string, section: string, key: string): string[] {
  let current = '';
  const values: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = header[1];
      continue;
    }
    const eq = line.indexOf('=');
    if (current === section && line.slice(0, eq).trim() === key) values.push(...line.slice(eq + 1).trim().split(/\s+/));
  }
  return values;
}

describe('the resume unit and the elogind sleep hook', () => {
  let dir: string;
  let root: string;
  let pidfile: string;
  let host: SignalRecorder;

  /** The rouses `work` caused the host, counted once they have all arrived. */
  const rousesDuring = async (work: () => Promise<unknown>): Promise<number> => {
    const before = host.rouses();
    await work();
    await host.settle();
    return host.rouses() - before;
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'resume-'));
    host = await SignalRecorder.start(dir, path.join(dir, 'bin/nox-mesh-host'));
    pidfile = path.join(dir, 'host.pid');
    await fs.writeFile(pidfile, `${host.pid}\n`);
  });
  beforeEach(async () => {
    // A machine as the package leaves it: the unit in the system unit directory beside the
    // targets systemd ships, and the helper where the unit says it is.
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'resume-root-'));
    const units = path.join(root, SYSTEM_UNITS);
    await fs.mkdir(units, { recursive: true });
    for (const name of await fs.readdir(SYSTEM_UNITS)) {
      if (name.endsWith('.target')) await fs.copyFile(path.join(SYSTEM_UNITS, name), path.join(units, name));
    }
    await fs.copyFile(UNIT, path.join(units, UNIT_NAME));
    await fs.mkdir(path.join(root, path.dirname(ROUSE_INSTALLED)), { recursive: true });
    await fs.copyFile(ROUSE, path.join(root, ROUSE_INSTALLED));
    await fs.chmod(path.join(root, ROUSE_INSTALLED), 0o755);
  });
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });
  afterAll(async () => {
    await host.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('passes systemd-analyze verify with no warning', async () => {
    const { stdout, stderr } = await exec('systemd-analyze', ['verify', `--root=${root}`, path.join(SYSTEM_UNITS, UNIT_NAME)]);
    expect({ stdout, stderr }).toEqual({ stdout: '', stderr: '' });
  });

  test('fails systemd-analyze verify when the helper is not where the unit runs it from', async () => {
    await fs.rm(path.join(root, ROUSE_INSTALLED));
    await expect(exec('systemd-analyze', ['verify', `--root=${root}`, path.join(SYSTEM_UNITS, UNIT_NAME)]))
      .rejects.toMatchObject({ stderr: expect.stringContaining(`${ROUSE_INSTALLED} is not executable`) });
  });

  test('runs once, after every kind of sleep has ended, and is wanted by each', async () => {
    const text = await fs.readFile(UNIT, 'utf8');
    expect(unitValues(text, 'Service', 'Type')).toEqual(['oneshot']);
    expect(unitValues(text, 'Unit', 'After')).toEqual(SLEEP_TARGETS);
    expect(unitValues(text, 'Install', 'WantedBy')).toEqual(SLEEP_TARGETS);
    expect(unitValues(text, 'Service', 'ExecStart')).toEqual([ROUSE_INSTALLED]);
  });

  test('is enabled by systemctl into each sleep target', async () => {
    await exec('systemctl', [`--root=${root}`, 'enable', UNIT_NAME]);
    const wanted: Record<string, string> = {};
    for (const target of SLEEP_TARGETS) {
      wanted[target] = await fs.readlink(path.join(root, 'etc/systemd/system', `${target}.wants`, UNIT_NAME));
    }
    expect(wanted).toEqual(Object.fromEntries(SLEEP_TARGETS.map((target) => [target, path.join(SYSTEM_UNITS, UNIT_NAME)])));
  });

  test('rouses the host when its ExecStart runs', async () => {
    const [command, ...args] = unitValues(await fs.readFile(UNIT, 'utf8'), 'Service', 'ExecStart');
    let run;
    const rouses = await rousesDuring(async () => { run = await runScript(path.join(root, command), args, { MESH_HOST_PIDFILE: pidfile }); });
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
    expect(rouses).toBe(1);
  });

  test('exits 0 quietly when its ExecStart runs and the host is not running', async () => {
    const [command, ...args] = unitValues(await fs.readFile(UNIT, 'utf8'), 'Service', 'ExecStart');
    const run = await runScript(path.join(root, command), args, { MESH_HOST_PIDFILE: path.join(dir, 'no-such.pid') });
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
  });

  test.each(['suspend', 'hibernate', 'hybrid-sleep', 'suspend-then-hibernate'])(
    'the elogind hook rouses the host after waking from %s',
    async (kind) => {
      let run;
      const rouses = await rousesDuring(async () => { run = await runScript(ELOGIND_HOOK, ['post', kind], { MESH_HOST_PIDFILE: pidfile, MESH_HOST_ROUSE: ROUSE }); });
      expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
      expect(rouses).toBe(1);
    },
  );

  test('the elogind hook leaves the host alone before sleeping', async () => {
    let run;
    const rouses = await rousesDuring(async () => { run = await runScript(ELOGIND_HOOK, ['pre', 'suspend'], { MESH_HOST_PIDFILE: pidfile, MESH_HOST_ROUSE: ROUSE }); });
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
    expect(rouses).toBe(0);
  });

  test('the elogind hook exits 0 quietly when the rouse helper is not installed', async () => {
    const run = await runScript(ELOGIND_HOOK, ['post', 'suspend'], { MESH_HOST_PIDFILE: pidfile, MESH_HOST_ROUSE: path.join(dir, 'missing') });
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
  });
});
