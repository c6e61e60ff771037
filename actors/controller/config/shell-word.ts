/**
 * A path or value as one shell word, for commands printed to copy: as it is when it needs no
 * quoting, else in single quotes. Paths with spaces are common enough in test and home
 * directories that a printed command must survive them.
 */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
