import { promises as fs } from 'node:fs';
import path from 'node:path';
import { writeHostTarball } from '../../scripts/build-host';

/**
 * Stand-ins for releases of the host binary, small enough to package in a moment (the real
 * single executable is 100 MB; scripts/build-host.test.ts runs that). Each knows its version.
 *
 * - 0.1.0 runs until stopped: appends `0.1.0` to `$MESH_TEST_MARKS/starts`, writes its pid to
 *   `$MESH_TEST_MARKS/running`, exits 0 on SIGTERM;
 * - 0.2.0 answers `version`, so an upgrade to it goes through, and crashes on start (appends
 *   `0.2.0` to `starts`, exits 1);
 * - 0.3.0 is a text file where the host should be: not a program at all.
 */
export const STAND_IN_RELEASES = {
  '0.1.0': `#!/bin/sh
# Stand-in host 0.1.0: it runs until stopped.
case \${1:-} in
version) echo "nox-mesh-host 0.1.0"; exit 0 ;;
run)
	trap 'exit 0' TERM INT
	echo 0.1.0 >>"$MESH_TEST_MARKS/starts"
	echo $$ >"$MESH_TEST_MARKS/running"
	while :; do sleep 0.05; done ;;
esac
exit 2
`,
  '0.2.0': `#!/bin/sh
# Stand-in host 0.2.0: it answers its version, so the upgrade goes through, and crashes on start.
case \${1:-} in
version) echo "nox-mesh-host 0.2.0"; exit 0 ;;
run) echo 0.2.0 >>"$MESH_TEST_MARKS/starts"; echo "0.2.0 cannot start here" >&2; exit 1 ;;
esac
exit 2
`,
  '0.3.0': 'This release installs a text file where the host should be.\n',
} as const;

/** A version of {@link STAND_IN_RELEASES}. */
export type StandInVersion = keyof typeof STAND_IN_RELEASES;

/** The release tarball of a stand-in version (the binary beside the real launcher and rouse helper), made in `dir`. */
export async function standInTarball(dir: string, version: StandInVersion): Promise<string> {
  const binary = path.join(dir, 'binaries', version, 'nox-mesh-host');
  await fs.mkdir(path.dirname(binary), { recursive: true });
  await fs.writeFile(binary, STAND_IN_RELEASES[version], { mode: 0o755 });
  const tarball = path.join(dir, 'tarballs', `${version}.tar.gz`);
  await writeHostTarball({ executable: binary, outFile: tarball });
  return tarball;
}
