/** One package dpkg's database holds as installed. */
export interface DpkgPackage {
  name: string;
  version: string;
  architecture: string | undefined;
}

// The third word of `Status:` is dpkg's state of the package on disk. Trigger states are
// installed packages waiting for another package's trigger: their files are in place and
// configured. `config-files` (removed, configuration kept), `half-installed`, `unpacked` and
// `half-configured` are not a package the machine has.
const INSTALLED_STATES = new Set(['installed', 'triggers-pending', 'triggers-awaited']);

/**
 * Reads dpkg's status file (`var/lib/dpkg/status`) directly: paragraphs separated by blank
 * lines, `Field: value` lines, continuation lines starting with a space. Returns the packages
 * whose state is installed, in file order.
 *
 * A package installed for two architectures (`Multi-Arch: same`, e.g. libc6 for amd64 and
 * i386) is one name twice; both are then named `name:arch`, as `dpkg-query` does, so neither
 * hides the other.
 */
export function parseDpkgStatus(text: string): DpkgPackage[] {
  const packages: DpkgPackage[] = [];
  for (const paragraph of text.split(/\n[ \t]*\n/)) {
    const fields = paragraphFields(paragraph);
    const name = fields.get('package');
    const version = fields.get('version');
    const state = fields.get('status')?.split(/\s+/)[2];
    if (name === undefined || version === undefined || state === undefined || !INSTALLED_STATES.has(state)) continue;
    packages.push({ name, version, architecture: fields.get('architecture') });
  }
  const counts = new Map<string, number>();
  for (const { name } of packages) counts.set(name, (counts.get(name) ?? 0) + 1);
  return packages.map((pkg) =>
    (counts.get(pkg.name) ?? 0) > 1 && pkg.architecture !== undefined ? { ...pkg, name: `${pkg.name}:${pkg.architecture}` } : pkg,
  );
}

// Field names are case-insensitive (deb822); only single-line values are needed here, so
// continuation lines are skipped.
function paragraphFields(paragraph: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of paragraph.split('\n')) {
    if (line.startsWith(' ') || line.startsWith('\t')) continue;
    const at = line.indexOf(':');
    if (at <= 0) continue;
    fields.set(line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim());
  }
  return fields;
}
