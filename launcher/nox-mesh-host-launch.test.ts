/**
 * The launcher script, run for real under each POSIX shell installed here, against the stub
 * package manager and stub hosts in launcher/testing/ (the real ones cannot be pointed at a
 * test's own host). The launcher's every policy path is walked by
 * model-tests/launcher.model.test.ts; these are the stories a person would tell about it, and
 * the parts the model does not see: package manager command lines, settings, bad files.
 */
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DEFAULT_MAX_ATTEMPTS } from '../machines/launcher.machine';
import { availableShells, EXIT, LauncherRig, STUBS } from './testing/launcher-rig';
import type { LauncherRigOptions, PackageManagerName } from './testing/launcher-rig';

const GOOD = '1.4.2';
const BAD = '2.0.0';

describe.each(availableShells())('nox-mesh-host-launch under $name', (shell) => {
  let rig: LauncherRig;

  async function makeRig(options: LauncherRigOptions = {}): Promise<LauncherRig> {
    rig = await LauncherRig.create({ shell, ...options });
    return rig;
  }

  afterEach(async () => {
    await rig?.dispose();
  });

  it('rolls an upgrade that crashes on start back to known-good, once, and the node comes back on it', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    await rig.publish(BAD, 'crashes');
    rig.installWithPackageManager(GOOD);
    const run = rig.start();
    await rig.waitForHostStart(1);
    await rig.tellHost('reconcile');
    await rig.waitFor('known-good to be written', async () => ((await rig.files()).knownGood === GOOD ? true : undefined));

    // The host upgrades itself, as a package resource would, and exits 0 to be started on it.
    rig.installWithPackageManager(BAD);
    await rig.tellHost('exit 0');
    const back = await rig.waitForHostStart(DEFAULT_MAX_ATTEMPTS + 2);

    expect((await rig.hostStarts()).map((start) => start.version)).toEqual([GOOD, ...Array(DEFAULT_MAX_ATTEMPTS).fill(BAD), GOOD]);
    expect(await rig.packageManagerCalls()).toEqual([`apk add nox-mesh-host=${GOOD}`, `apk add nox-mesh-host=${BAD}`, `apk add nox-mesh-host=${GOOD}`]);
    expect(LauncherRig.alive(back.pid)).toBe(true);
    expect(run.exit).toBeNull();
    expect(await rig.files()).toEqual({ attempts: 1, knownGood: GOOD, rolledBack: GOOD, halted: null });
    expect(run.stderr).toContain(`nox-mesh-host-launch: the host was started ${DEFAULT_MAX_ATTEMPTS} times without completing a reconcile: rolling back to ${GOOD} with apk\n`);
    // The hosts' own output passes through: the crashes on stderr, the running host on stdout.
    expect(run.stderr.match(/nox-mesh-host 2\.0\.0 \(stub\): cannot start/g)).toHaveLength(DEFAULT_MAX_ATTEMPTS);
    expect(run.stdout.match(/nox-mesh-host 1\.4\.2 \(stub\): running/g)).toHaveLength(2);

    // Once the rolled-back version completes a reconcile, the roll back is spent and forgotten.
    await rig.tellHost('reconcile');
    await rig.waitFor('the rolled-back marker to be removed', async () => ((await rig.files()).rolledBack === null ? true : undefined));
    expect(await rig.files()).toEqual({ attempts: 0, knownGood: GOOD, rolledBack: null, halted: null });
    // Every file was written whole: nothing half-written is left beside them.
    expect((await readdir(rig.launchDir)).sort()).toEqual(['known-good']);
  });

  it('starts the host with glibc\'s trim and mmap thresholds lowered, and keeps the ones the service sets', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    rig.start();
    const first = await rig.waitForHostStart(1);
    expect(await rig.hostEnvironments()).toEqual([
      `${first.pid} MALLOC_TRIM_THRESHOLD_=131072`,
      `${first.pid} MALLOC_MMAP_THRESHOLD_=32768`,
    ]);
    const firstRun = rig.run;
    firstRun?.signal('SIGTERM');
    expect(await firstRun?.waitForExit()).toEqual({ code: EXIT.stopped, signal: null });

    const own = rig.start({ MALLOC_TRIM_THRESHOLD_: '65536', MALLOC_MMAP_THRESHOLD_: '131072' });
    const second = await rig.waitForHostStart(2);
    expect((await rig.hostEnvironments()).slice(2)).toEqual([
      `${second.pid} MALLOC_TRIM_THRESHOLD_=65536`,
      `${second.pid} MALLOC_MMAP_THRESHOLD_=131072`,
    ]);
    own.signal('SIGTERM');
    expect(await own.waitForExit()).toEqual({ code: EXIT.stopped, signal: null });
  });

  it('halts when the version it rolled back to fails as well, and says what a person does next', async () => {
    await makeRig();
    await rig.publish(GOOD, 'crashes');
    await rig.publish(BAD, 'crashes');
    rig.installWithPackageManager(BAD);
    await rig.writeLaunchFile('known-good', `${GOOD}\n`);
    const run = rig.start();

    expect(await run.waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect((await rig.hostStarts()).map((start) => start.version)).toEqual([...Array(3).fill(BAD), ...Array(3).fill(GOOD)]);
    expect(await rig.packageManagerCalls()).toEqual([`apk add nox-mesh-host=${BAD}`, `apk add nox-mesh-host=${GOOD}`]);
    const files = await rig.files();
    expect(files).toEqual({
      attempts: 0,
      knownGood: GOOD,
      rolledBack: GOOD,
      halted: {
        reason: 'rolled-back-already',
        detail: `the host was started 3 times without completing a reconcile after being rolled back to ${GOOD}: the machine is the problem, not the binary`,
        halted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      },
    });
    expect(run.stderr).toContain(`nox-mesh-host-launch: halted: ${files.halted!.detail}\n`);
    expect(run.stderr).toContain(`then remove ${rig.launchDir}/halted`);
  });

  it('says it is halted and exits without counting or starting the host', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    const halt = 'reason=rolled-back-already\ndetail=the host was started 3 times without completing a reconcile\nhalted_at=2026-05-01T10:00:00Z\n';
    await rig.writeLaunchFile('halted', halt);
    await rig.writeLaunchFile('attempts', '0\n');
    const run = rig.start();

    expect(await run.waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect(run.stderr).toBe(
      'nox-mesh-host-launch: halted since 2026-05-01T10:00:00Z: the host was started 3 times without completing a reconcile\n'
      + `nox-mesh-host-launch: not starting the host. Look at the machine (the host's log says why it failed), then remove ${rig.launchDir}/halted and restart the service (systemctl restart nox-mesh-host; OpenRC restarts it by itself)\n`,
    );
    expect(await rig.hostStarts()).toEqual([]);
    expect((await rig.files()).attempts).toBe(0);
    expect((await rig.files()).halted?.reason).toBe('rolled-back-already');
  });

  it('starts the host with a fresh count once a person has removed the halt file', async () => {
    await makeRig({ maxAttempts: 1 });
    await rig.publish(BAD, 'crashes');
    rig.installWithPackageManager(BAD);
    expect(await rig.start().waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect(await rig.hostStarts()).toHaveLength(1);

    await rig.publish(BAD, 'runs');
    rig.installWithPackageManager(BAD);
    await rig.removeLaunchFile('halted');
    rig.start();
    await rig.waitForHostStart(2);
    expect((await rig.files()).attempts).toBe(1);
  });

  it('passes SIGTERM on to the host and exits 0 once the host has, without starting it again', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    const run = rig.start();
    const host = await rig.waitForHostStart(1);
    run.signal('SIGTERM');

    expect(await run.waitForExit()).toEqual({ code: EXIT.stopped, signal: null });
    expect(await rig.hostSignals()).toEqual([`${host.pid} TERM`]);
    expect(LauncherRig.alive(host.pid)).toBe(false);
    expect(await rig.hostStarts()).toHaveLength(1);
    expect(run.stderr).toMatch(/nox-mesh-host-launch: stopped by SIGTERM; the host exited with status 0\n$/);
  });

  it('passes SIGINT on as SIGTERM, which a host started in the background can always hear', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    const run = rig.start();
    const host = await rig.waitForHostStart(1);
    run.signal('SIGINT');

    expect(await run.waitForExit()).toEqual({ code: EXIT.stopped, signal: null });
    expect(await rig.hostSignals()).toEqual([`${host.pid} TERM`]);
    expect(await rig.hostStarts()).toHaveLength(1);
  });

  it('lets a roll back under way finish when it is stopped, records it, and starts nothing', async () => {
    await makeRig({ maxAttempts: 1 });
    await rig.publish(GOOD, 'runs');
    await rig.writeLaunchFile('attempts', '1\n');
    await rig.writeLaunchFile('known-good', `${GOOD}\n`);
    await rig.holdPackageManager(true);
    const run = rig.start();
    await rig.waitFor('the package manager to be called', async () => ((await rig.packageManagerCalls()).length === 1 ? true : undefined));
    run.signal('SIGTERM');
    // Long enough for dozens of the stub's polls: the launcher is still waiting for it.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(run.exit).toBeNull();

    await rig.releasePackageManager('ok');
    expect(await run.waitForExit()).toEqual({ code: EXIT.stopped, signal: null });
    expect(await rig.installs()).toEqual([GOOD]);
    expect(await rig.files()).toEqual({ attempts: 0, knownGood: GOOD, rolledBack: GOOD, halted: null });
    expect(await rig.hostStarts()).toEqual([]);
  });

  it('starts the host as `run --state-dir <state dir>` with the environment it was given', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    rig.start();
    expect((await rig.waitForHostStart(1)).args).toEqual(['run', '--state-dir', rig.stateDir]);
  });

  it('halts with nothing to roll back to when no host ever completed a reconcile', async () => {
    await makeRig({ maxAttempts: 2 });
    await rig.publish(BAD, 'crashes');
    rig.installWithPackageManager(BAD);
    const run = rig.start();

    expect(await run.waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect(await rig.hostStarts()).toHaveLength(2);
    expect(await rig.packageManagerCalls()).toEqual([`apk add nox-mesh-host=${BAD}`]);
    expect((await rig.files()).halted).toMatchObject({
      reason: 'nothing-to-roll-back-to',
      detail: `the host was started 2 times without completing a reconcile, and no known-good version is recorded in ${rig.launchDir}/known-good to roll back to`,
    });
  });

  it('halts when the package manager cannot reinstall known-good, quoting its exit status', async () => {
    await makeRig({ maxAttempts: 1 });
    await rig.publish(BAD, 'crashes');
    rig.installWithPackageManager(BAD);
    await rig.writeLaunchFile('known-good', `${GOOD}\n`);
    await rig.failPackageManager(true);
    const run = rig.start();

    expect(await run.waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect(await rig.packageManagerCalls()).toEqual([`apk add nox-mesh-host=${BAD}`, `apk add nox-mesh-host=${GOOD}`]);
    const files = await rig.files();
    expect(files.rolledBack).toBeNull();
    expect(files.halted).toMatchObject({ reason: 'roll-back-failed', detail: expect.stringMatching(/rolling back to 1\.4\.2 with apk failed \(status 1\)$/) });
    expect(run.stderr).toContain('apk (stub): failed, as the test asked');
  });

  it('ignores a known-good that is not a package version rather than hand it to the package manager', async () => {
    await makeRig({ maxAttempts: 1 });
    await rig.publish(BAD, 'crashes');
    rig.installWithPackageManager(BAD);
    await rig.writeLaunchFile('known-good', '1.0; rm -rf /\n');
    const run = rig.start();

    expect(await run.waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect(await rig.packageManagerCalls()).toEqual([`apk add nox-mesh-host=${BAD}`]);
    expect((await rig.files()).halted?.reason).toBe('nothing-to-roll-back-to');
    expect(run.stderr).toContain('holds "1.0; rm -rf /", which is not a package version');
  });

  it('counts from 0 when the counter holds something that is not a number, and says so', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    await rig.writeLaunchFile('attempts', 'garbage\n');
    const run = rig.start();
    await rig.waitForHostStart(1);

    expect((await rig.files()).attempts).toBe(1);
    expect(run.stderr).toContain('holds "garbage", not a number: counting from 0');
  });

  it.each(['0', 'three', '-1'])('refuses MESH_LAUNCH_MAX_ATTEMPTS=%s, naming the setting and the fix, and starts nothing', async (value) => {
    await makeRig({ env: { MESH_LAUNCH_MAX_ATTEMPTS: value } });
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    const run = rig.start();

    expect(await run.waitForExit()).toEqual({ code: EXIT.unusable, signal: null });
    expect(run.stderr).toContain(`MESH_LAUNCH_MAX_ATTEMPTS must be a whole number of starts, 1 or more, and is "${value}"`);
    expect(await rig.hostStarts()).toEqual([]);
  });

  it('refuses to run when it cannot keep its counter, rather than start a host it cannot count', async () => {
    await makeRig();
    await rig.publish(GOOD, 'runs');
    rig.installWithPackageManager(GOOD);
    // A file where the state directory should be: nothing can be made under it.
    const blocked = join(rig.root, 'not-a-directory');
    await writeFile(blocked, '');
    const run = rig.start({ MESH_STATE_DIR: blocked });

    expect(await run.waitForExit()).toEqual({ code: EXIT.unusable, signal: null });
    expect(run.stderr).toContain(`cannot write to ${blocked}/launch, where start attempts are counted`);
    expect(await rig.hostStarts()).toEqual([]);
  });

  it('prints its usage for --help and refuses arguments', async () => {
    await makeRig();
    const help = rig.start({}, ['--help']);
    expect(await help.waitForExit()).toEqual({ code: 0, signal: null });
    expect(help.stdout).toMatch(/^usage: nox-mesh-host-launch\n/);
    const refused = rig.start({}, ['run']);
    expect(await refused.waitForExit()).toEqual({ code: EXIT.unusable, signal: null });
    expect(refused.stderr).toContain('nox-mesh-host-launch: takes no arguments, was given: run');
  });
});

describe('nox-mesh-host-launch rolling back with each package manager', () => {
  let rig: LauncherRig;

  afterEach(async () => {
    await rig?.dispose();
  });

  /** A machine whose counter is at the limit, with `version` known good: the next start rolls back. */
  async function atTheLimit(packageManager: PackageManagerName, version: string, env: Record<string, string> = {}): Promise<LauncherRig> {
    rig = await LauncherRig.create({ packageManager, maxAttempts: 1, env });
    await rig.publish(version, 'runs');
    await rig.writeLaunchFile('attempts', '1\n');
    await rig.writeLaunchFile('known-good', `${version}\n`);
    return rig;
  }

  it('uses apk add nox-mesh-host=<version> on Alpine', async () => {
    await atTheLimit('apk', '1.4.2-r0');
    rig.start();
    await rig.waitForHostStart(1);
    expect(await rig.packageManagerCalls()).toEqual(['apk add nox-mesh-host=1.4.2-r0']);
  });

  it('uses apt-get install -y --allow-downgrades nox-mesh-host=<version> on Debian', async () => {
    await atTheLimit('apt-get', '1.4.2-1');
    rig.start();
    await rig.waitForHostStart(1);
    expect(await rig.packageManagerCalls()).toEqual(['apt-get install -y --allow-downgrades nox-mesh-host=1.4.2-1']);
  });

  it('installs the package from pacman\'s cache with -U when it is there, since the repository may be out of reach', async () => {
    await atTheLimit('pacman', '1.4.2-1');
    const cacheDir = join(rig.root, 'pacman-cache');
    await mkdir(cacheDir);
    const cached = join(cacheDir, 'nox-mesh-host-1.4.2-1-x86_64.pkg.tar.zst');
    await writeFile(cached, '');
    await writeFile(`${cached}.sig`, '');
    await writeFile(join(cacheDir, 'nox-mesh-host-1.4.2-10-x86_64.pkg.tar.zst.part'), '');
    rig.start({ MESH_LAUNCH_PACMAN_CACHE: cacheDir });
    await rig.waitForHostStart(1);
    expect(await rig.packageManagerCalls()).toEqual([`pacman -U --noconfirm ${cached}`]);
  });

  it('asks pacman for the version by name with -S when the cache does not have it', async () => {
    await atTheLimit('pacman', '1.4.2-1', { MESH_LAUNCH_PACMAN_CACHE: '/nonexistent' });
    rig.start();
    await rig.waitForHostStart(1);
    expect(await rig.packageManagerCalls()).toEqual(['pacman -S --noconfirm nox-mesh-host=1.4.2-1']);
  });

  it('refuses a MESH_LAUNCH_PACKAGE_MANAGER it does not know, halting with the reason', async () => {
    await atTheLimit('apk', GOOD, { MESH_LAUNCH_PACKAGE_MANAGER: '/usr/bin/zypper' });
    const run = rig.start();
    expect(await run.waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect((await rig.files()).halted?.detail).toContain('MESH_LAUNCH_PACKAGE_MANAGER is "/usr/bin/zypper"; it must name apk, apt-get or pacman, or be a path to one');
  });
});

describe('nox-mesh-host-launch choosing a package manager', () => {
  let rig: LauncherRig;

  afterEach(async () => {
    await rig?.dispose();
  });

  // The tools the script and the stubs use, and nothing else, so which package managers exist
  // is decided by the test and not by this machine (which has apt-get, and maybe pacman).
  const TOOLS = ['sh', 'sed', 'head', 'mv', 'rm', 'mkdir', 'date', 'sleep', 'chmod'];

  async function pathWith(managers: PackageManagerName[]): Promise<string> {
    const dir = join(rig.root, 'path');
    await mkdir(dir);
    for (const tool of TOOLS) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      await symlink(found, join(dir, tool));
    }
    for (const manager of managers) await symlink(STUBS.packageManager, join(dir, manager));
    return dir;
  }

  it.each<[PackageManagerName[], string]>([
    [['apk', 'apt-get', 'pacman'], 'apk'],
    [['apt-get', 'pacman'], 'apt-get'],
    [['pacman'], 'pacman'],
  ])('finds %j and uses %s', async (managers, chosen) => {
    rig = await LauncherRig.create({ maxAttempts: 1 });
    await rig.publish(GOOD, 'runs');
    await rig.writeLaunchFile('attempts', '1\n');
    await rig.writeLaunchFile('known-good', `${GOOD}\n`);
    rig.start({ PATH: await pathWith(managers), MESH_LAUNCH_PACKAGE_MANAGER: '' });
    await rig.waitForHostStart(1);
    expect((await rig.packageManagerCalls())[0].split(' ')[0]).toBe(chosen);
  });

  it('halts saying no package manager was found when there is none', async () => {
    rig = await LauncherRig.create({ maxAttempts: 1 });
    await rig.writeLaunchFile('attempts', '1\n');
    await rig.writeLaunchFile('known-good', `${GOOD}\n`);
    const run = rig.start({ PATH: await pathWith([]), MESH_LAUNCH_PACKAGE_MANAGER: '' });
    expect(await run.waitForExit()).toEqual({ code: EXIT.halted, signal: null });
    expect((await rig.files()).halted).toMatchObject({ reason: 'roll-back-failed', detail: expect.stringContaining('no package manager found (looked for apk, apt-get and pacman)') });
  });
});
