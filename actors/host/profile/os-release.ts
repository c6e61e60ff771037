/**
 * Parses an os-release file (os-release(5)): `KEY=value` lines, values optionally in single or
 * double quotes with shell-style backslash escapes, `#` comments and blank lines ignored.
 * Returns the keys as written; a malformed line is skipped rather than spoiling the rest.
 */
export function parseOsRelease(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match === null) continue;
    const [, key, value] = match as unknown as [string, string, string];
    fields.set(key, unquote(value));
  }
  return fields;
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) return value.slice(1, -1).replace(/\\(["\\$`])/g, '$1');
  return value.replace(/\\(.)/g, '$1');
}

/**
 * Parses Android's `build.prop`: `key=value` lines, `#` comments. Only what the profile needs
 * is read from it (the release), so no quoting rules apply.
 */
export function parseBuildProp(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at <= 0) continue;
    fields.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return fields;
}
