import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runTool } from './run-tool';

/** A hand-made Debian package: its control fields, its files and an optional maintainer script. */
export interface DebSpec {
  name: string;
  version: string;
  /** Default `all`, so the package installs on any machine. */
  architecture?: string;
  /** Files by path relative to the root (`usr/share/demo/version`) and their text. */
  files?: Record<string, string>;
  /** A preinst script (with its `#!` line), run by dpkg before unpacking. */
  preinst?: string;
}

/**
 * Builds a real `.deb` with `dpkg-deb` into `outDir` and returns its path, named the way a
 * repository names it: `name_version_arch.deb` (the epoch left out, as Debian does).
 */
export async function buildDeb(outDir: string, spec: DebSpec): Promise<string> {
  const architecture = spec.architecture ?? 'all';
  const staging = await mkdtemp(join(tmpdir(), 'build-deb-'));
  try {
    await mkdir(join(staging, 'DEBIAN'));
    const control = [
      `Package: ${spec.name}`,
      `Version: ${spec.version}`,
      `Architecture: ${architecture}`,
      'Maintainer: Novox Mesh tests <tests@example.invalid>',
      `Description: ${spec.name}, built for a test`,
      '',
    ].join('\n');
    await writeFile(join(staging, 'DEBIAN/control'), control);
    if (spec.preinst !== undefined) {
      await writeFile(join(staging, 'DEBIAN/preinst'), spec.preinst);
      await chmod(join(staging, 'DEBIAN/preinst'), 0o755);
    }
    for (const [path, text] of Object.entries(spec.files ?? {})) {
      await mkdir(dirname(join(staging, path)), { recursive: true });
      await writeFile(join(staging, path), text);
    }
    await mkdir(outDir, { recursive: true });
    const debPath = join(outDir, `${spec.name}_${spec.version.replace(/^\d+:/, '')}_${architecture}.deb`);
    await runTool(['dpkg-deb', '--root-owner-group', '-Zgzip', '-z1', '--build', staging, debPath]);
    return debPath;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
