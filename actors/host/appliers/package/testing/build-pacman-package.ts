import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runTool } from './run-tool';

/** A hand-made pacman package: name, full version (`1.0-1`, pkgver-pkgrel) and files. */
export interface PacmanPackageSpec {
  name: string;
  version: string;
  /** Default `any`, so the package installs on any machine. */
  arch?: string;
  /** Files by path relative to the root (`usr/share/demo/version`) and their text. */
  files?: Record<string, string>;
}

/**
 * Builds a real pacman package into `outDir` and returns its path
 * (`name-version-arch.pkg.tar.zst`): a `.PKGINFO` followed by the files, in a zstd tarball
 * owned by root, which is what pacman reads (makepkg adds an .MTREE that pacman does not need).
 */
export async function buildPacmanPackage(outDir: string, spec: PacmanPackageSpec): Promise<string> {
  const arch = spec.arch ?? 'any';
  const files = spec.files ?? {};
  const staging = await mkdtemp(join(tmpdir(), 'build-pacman-'));
  try {
    const size = Object.values(files).reduce((total, text) => total + Buffer.byteLength(text), 0);
    const info = [
      `pkgname = ${spec.name}`,
      `pkgbase = ${spec.name}`,
      `pkgver = ${spec.version}`,
      `pkgdesc = ${spec.name}, built for a test`,
      'url = https://example.invalid',
      'builddate = 1700000000',
      'packager = Novox Mesh tests <tests@example.invalid>',
      `size = ${size}`,
      `arch = ${arch}`,
      'license = Apache-2.0',
      '',
    ].join('\n');
    await writeFile(join(staging, '.PKGINFO'), info);
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(staging, path)), { recursive: true });
      await writeFile(join(staging, path), text);
    }
    await mkdir(outDir, { recursive: true });
    const packagePath = join(outDir, `${spec.name}-${spec.version}-${arch}.pkg.tar.zst`);
    const entries = (await readdir(staging)).filter((entry) => entry !== '.PKGINFO').sort();
    await runTool(['tar', '--zstd', '--owner=0', '--group=0', '--numeric-owner', '-C', staging, '-cf', packagePath, '.PKGINFO', ...entries]);
    return packagePath;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
