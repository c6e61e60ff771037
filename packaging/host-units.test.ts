import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeAlpineRecipe } from '../scripts/build-packages';
import { PACKAGING } from './rouse-stand-in';
import { standInTarball } from './testing/stand-in-releases';

// The init files and the package recipes as the systems read them: the unit by the real
// systemd-analyze and systemctl in a temporary root; the OpenRC service, the APKBUILD and the
// PKGBUILD by a real shell, which is how openrc-run, abuild and makepkg read them (each sources
// the file and reads its variables and functions).

const exec = promisify(execFile);
const UNIT_NAME = 'nox-mesh-host.service';
const SYSTEM_UNITS = '/usr/lib/systemd/system';
const LAUNCHER_INSTALLED = '/usr/lib/nox-mesh-host/launch';
const LAUNCHER = path.join(PACKAGING, '..', 'launcher', 'nox-mesh-host-launch');

// The unit as seed 000 gives it ("The unit it installs"), to the character.
const SEED_UNIT = `[Unit]
Description=Novox Mesh node host
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=/usr/lib/nox-mesh-host/launch
Restart=always
RestartSec=5s
StateDirectory=mesh-host

[Install]
WantedBy=multi-user.target
`;

/** Sources `file` in sh, runs `script` after it, and returns what it printed. */
async function sourced(file: string, script: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await exec('sh', ['-c', `set -e\n. "$1"\n${script}`, 'sh', file], { env: { PATH: process.env.PATH, ...env } });
  return stdout;
}

async function projectVersion(): Promise<string> {
  return (JSON.parse(await fs.readFile(path.join(PACKAGING, '..', 'package.json'), 'utf8')) as { version: string }).version;
}

describe('the systemd unit', () => {
  let root: string;

  beforeEach(async () => {
    // A machine as the package leaves it: the unit beside the targets systemd ships, and the
    // launcher where the unit runs it from.
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'host-unit-root-'));
    const units = path.join(root, SYSTEM_UNITS);
    await fs.mkdir(units, { recursive: true });
    for (const name of await fs.readdir(SYSTEM_UNITS)) {
      if (name.endsWith('.target')) await fs.copyFile(path.join(SYSTEM_UNITS, name), path.join(units, name));
    }
    await fs.copyFile(path.join(PACKAGING, UNIT_NAME), path.join(units, UNIT_NAME));
    await fs.mkdir(path.join(root, path.dirname(LAUNCHER_INSTALLED)), { recursive: true });
    await fs.copyFile(LAUNCHER, path.join(root, LAUNCHER_INSTALLED));
    await fs.chmod(path.join(root, LAUNCHER_INSTALLED), 0o755);
  });

  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  test("is the seed's unit, word for word under a comment, with a halt left stopped and the state directory private", async () => {
    const text = await fs.readFile(path.join(PACKAGING, UNIT_NAME), 'utf8');
    const withAdditions = SEED_UNIT
      .replace('RestartSec=5s\n', 'RestartSec=5s\nRestartPreventExitStatus=3\n')
      .replace('StateDirectory=mesh-host\n', 'StateDirectory=mesh-host\nStateDirectoryMode=0700\n');

    expect(text.split('\n').filter((line) => !line.startsWith('#')).join('\n').trimStart()).toBe(withAdditions);
  });

  test('is not restarted after the status the real launcher exits with when it is halted', async () => {
    const state = path.join(root, 'var/lib/mesh-host');
    await fs.mkdir(path.join(state, 'launch'), { recursive: true });
    await fs.writeFile(path.join(state, 'launch', 'halted'), 'reason=rolled-back-already\ndetail=the host was started 3 times without completing a reconcile\n');
    const halted = await exec('sh', [path.join(root, LAUNCHER_INSTALLED)], { env: { PATH: process.env.PATH, MESH_STATE_DIR: state } }).catch((error: { code?: number }) => error);
    const unit = await fs.readFile(path.join(PACKAGING, UNIT_NAME), 'utf8');
    const prevented = [...unit.matchAll(/^RestartPreventExitStatus=(.*)$/gm)].flatMap((line) => (line[1] as string).trim().split(/\s+/));

    expect((halted as { code?: number }).code).toBeGreaterThan(0);
    expect(prevented).toEqual([String((halted as { code?: number }).code)]);
  });

  test('passes systemd-analyze verify with no warning', async () => {
    const { stdout, stderr } = await exec('systemd-analyze', ['verify', `--root=${root}`, path.join(SYSTEM_UNITS, UNIT_NAME)]);

    expect({ stdout, stderr }).toEqual({ stdout: '', stderr: '' });
  });

  test('fails systemd-analyze verify when the launcher is not where the unit runs it from', async () => {
    await fs.rm(path.join(root, LAUNCHER_INSTALLED));

    await expect(exec('systemd-analyze', ['verify', `--root=${root}`, path.join(SYSTEM_UNITS, UNIT_NAME)]))
      .rejects.toMatchObject({ stderr: expect.stringContaining(`${LAUNCHER_INSTALLED} is not executable`) });
  });

  test('is enabled by systemctl into multi-user.target, so it starts at boot', async () => {
    await exec('systemctl', [`--root=${root}`, 'enable', UNIT_NAME]);

    expect(await fs.readlink(path.join(root, 'etc/systemd/system/multi-user.target.wants', UNIT_NAME))).toBe(path.join(SYSTEM_UNITS, UNIT_NAME));
  });
});

describe('the OpenRC service', () => {
  const SERVICE = path.join(PACKAGING, 'nox-mesh-host.openrc');

  test('is a shell script for openrc-run', async () => {
    const text = await fs.readFile(SERVICE, 'utf8');

    expect(text.split('\n')[0]).toBe('#!/sbin/openrc-run');
    await exec('sh', ['-n', SERVICE]);
  });

  test('has supervise-daemon run the launcher and start it again whenever it exits, after 5 s, without giving up', async () => {
    const said = await sourced(SERVICE, 'printf "%s|%s|%s|%s\\n" "$supervisor" "$command" "$respawn_delay" "$respawn_max"');

    expect(said).toBe('supervise-daemon|/usr/lib/nox-mesh-host/launch|5|0\n');
  });

  test('starts once the network is up and makes the state directory the unit gets from StateDirectory', async () => {
    const said = await sourced(SERVICE, [
      'need() { echo "need $*"; }',
      'after() { echo "after $*"; }',
      'checkpath() { echo "checkpath $*"; }',
      'depend',
      'start_pre',
    ].join('\n'));

    expect(said).toBe('need net\nafter firewall\ncheckpath --directory --mode 0700 /var/lib/mesh-host\n');
  });
});

/** What a recipe's package() function installs, run by a real shell over stand-in sources. */
async function installedBy(recipe: string, sources: string[], variables: Record<string, string>): Promise<string[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'recipe-'));
  try {
    const srcdir = path.join(dir, 'src');
    const pkgdir = path.join(dir, 'pkg');
    await fs.mkdir(srcdir);
    await fs.mkdir(pkgdir);
    for (const source of sources) await fs.writeFile(path.join(srcdir, source), `${source}\n`);
    await sourced(recipe, 'cd "$srcdir"\npackage', { srcdir, pkgdir, ...variables });
    const found: string[] = [];
    const walk = async (at: string): Promise<void> => {
      for (const entry of await fs.readdir(at, { withFileTypes: true })) {
        const full = path.join(at, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.isSymbolicLink()) found.push(`${path.relative(pkgdir, full)} -> ${await fs.readlink(full)}`);
        else found.push(`${path.relative(pkgdir, full)} ${((await fs.stat(full)).mode & 0o777).toString(8)} ${(await fs.readFile(full, 'utf8')).trim()}`);
      }
    };
    await walk(pkgdir);
    return found.sort();
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const TARBALL_MEMBERS = ['nox-mesh-host', 'nox-mesh-host-launch', 'nox-mesh-host-rouse'];

describe('the APKBUILD', () => {
  const APKBUILD = path.join(PACKAGING, 'APKBUILD');

  test('is valid sh', async () => {
    await exec('sh', ['-n', APKBUILD]);
  });

  test("has abuild's required variables, this version, the libraries a musl Node needs, and never strips the single executable", async () => {
    const said = await sourced(APKBUILD, 'for v in pkgname pkgver pkgrel pkgdesc url arch license depends options sha512sums; do eval "printf \'%s=%s\\n\' $v \\"\\$$v\\""; done\necho "source=$(echo $source)"');

    expect(said).toBe([
      'pkgname=nox-mesh-host',
      `pkgver=${await projectVersion()}`,
      'pkgrel=0',
      'pkgdesc=Novox Mesh node host: holds this machine to the declarations of its controller',
      'url=https://novox.invalid/mesh',
      'arch=x86_64',
      'license=Apache-2.0',
      'depends=libgcc libstdc++',
      'options=!strip !check',
      // Written by `abuild checksum` beside the release tarball, never a placeholder here.
      'sha512sums=',
      `source=mesh-host-alpine-${await projectVersion()}-x86_64.tar.gz nox-mesh-host.openrc nox-mesh-host-resume.elogind nox-mesh-host-network.sh`,
      '',
    ].join('\n'));
  });

  test('installs the executable, the launcher, the OpenRC service and the hooks where they are looked for', async () => {
    const version = await projectVersion();
    const installed = await installedBy(APKBUILD, [...TARBALL_MEMBERS, 'nox-mesh-host.openrc', 'nox-mesh-host-resume.elogind', 'nox-mesh-host-network.sh'], { pkgver: version });

    expect(installed).toEqual([
      'etc/NetworkManager/dispatcher.d/90-nox-mesh-host 755 nox-mesh-host-network.sh',
      'etc/init.d/nox-mesh-host 755 nox-mesh-host.openrc',
      'lib/elogind/system-sleep/nox-mesh-host 755 nox-mesh-host-resume.elogind',
      'usr/bin/nox-mesh-host 755 nox-mesh-host',
      'usr/lib/nox-mesh-host/launch 755 nox-mesh-host-launch',
      'usr/lib/nox-mesh-host/nox-mesh-host-rouse 755 nox-mesh-host-rouse',
    ]);
  });
});

describe('the Alpine recipe the build writes', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'alpine-recipe-'));
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** Checks the recipe's sources the way `abuild verify` does: sha512sum -c over its sha512sums. */
  async function abuildVerify(recipeDir: string): Promise<string> {
    const sums = await sourced(path.join(recipeDir, 'APKBUILD'), 'printf "%s\\n" "$sha512sums"');
    const list = path.join(dir, 'sums');
    await fs.writeFile(list, sums.split('\n').filter((line) => line.trim() !== '').map((line) => `${line.trim()}\n`).join(''));
    return exec('sha512sum', ['-c', list], { cwd: recipeDir }).then(({ stdout }) => stdout, (error: { stdout?: string }) => `failed: ${error.stdout ?? ''}`);
  }

  test('fills the checksums of the release tarball and the other sources, as abuild checksum writes them, with Alpine\'s release number', async () => {
    const version = await projectVersion();
    const recipeDir = path.join(dir, 'alpine');
    const recipe = await writeAlpineRecipe({ tarball: await standInTarball(dir, '0.1.0'), version, release: 2, outDir: recipeDir });
    const said = await sourced(recipe, 'echo "$pkgver-r$pkgrel"; echo $source');

    expect(said).toBe(`${version}-r1\nmesh-host-alpine-${version}-x86_64.tar.gz nox-mesh-host.openrc nox-mesh-host-resume.elogind nox-mesh-host-network.sh\n`);
    expect(await abuildVerify(recipeDir)).toBe([
      `mesh-host-alpine-${version}-x86_64.tar.gz: OK`,
      'nox-mesh-host.openrc: OK',
      'nox-mesh-host-resume.elogind: OK',
      'nox-mesh-host-network.sh: OK',
      '',
    ].join('\n'));
  });

  test('its checksums refuse a tarball changed after the build', async () => {
    const version = await projectVersion();
    const recipeDir = path.join(dir, 'alpine');
    await writeAlpineRecipe({ tarball: await standInTarball(dir, '0.1.0'), version, release: 1, outDir: recipeDir });
    await fs.copyFile(await standInTarball(dir, '0.2.0'), path.join(recipeDir, `mesh-host-alpine-${version}-x86_64.tar.gz`));

    expect(await abuildVerify(recipeDir)).toMatch(new RegExp(`^failed: mesh-host-alpine-${version.replace(/\./g, '\\.')}-x86_64\\.tar\\.gz: FAILED\n`));
  });
});

describe('the PKGBUILD', () => {
  const PKGBUILD = path.join(PACKAGING, 'PKGBUILD');

  test('is for this version, depends on the runtime libraries only, and never strips the single executable', async () => {
    // makepkg is bash and sources the file, as here.
    const { stdout } = await exec('bash', ['-c', '. "$1"; echo "$pkgname $pkgver-$pkgrel"; echo "${arch[*]}"; echo "${depends[*]}"; echo "${options[*]}"', 'bash', PKGBUILD]);

    expect(stdout).toBe(`nox-mesh-host ${await projectVersion()}-1\nx86_64\nglibc gcc-libs\n!strip !debug !emptydirs\n`);
  });

  test("keeps on upgrade the same files under /etc as the Debian package's conffiles", async () => {
    const { stdout } = await exec('bash', ['-c', '. "$1"; printf "/%s\\n" "${backup[@]}"', 'bash', PKGBUILD]);
    const conffiles = await fs.readFile(path.join(PACKAGING, 'debian', 'conffiles'), 'utf8');

    expect(stdout).toBe(conffiles);
    expect(stdout).toMatch(/^\/etc\//);
  });
});
