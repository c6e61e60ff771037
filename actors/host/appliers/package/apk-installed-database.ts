/**
 * Reads apk's installed-package database (`lib/apk/db/installed`): one block per package,
 * blocks separated by a blank line, each line a one-letter field and its value (`P:` the
 * name, `V:` the version, `F:`/`R:` the files, and so on). Returns name → version.
 */
export function parseApkInstalled(text: string): Map<string, string> {
  const installed = new Map<string, string>();
  for (const block of text.split(/\n\s*\n/)) {
    let name: string | undefined;
    let version: string | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith('P:')) name = line.slice(2).trim();
      else if (line.startsWith('V:')) version = line.slice(2).trim();
    }
    if (name !== undefined && name !== '' && version !== undefined && version !== '') installed.set(name, version);
  }
  return installed;
}
