/**
 * Lays rows out in columns for a terminal: each column as wide as its widest cell, two spaces
 * between, no trailing space. With `headers`, they are the first line. Widths count code
 * points, which is right for the names and versions an inventory holds.
 */
export function formatTable(rows: readonly (readonly string[])[], headers?: readonly string[]): string {
  const all = headers === undefined ? rows : [headers, ...rows];
  const widths: number[] = [];
  for (const row of all) row.forEach((cell, index) => { widths[index] = Math.max(widths[index] ?? 0, [...cell].length); });
  return all
    .map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell + ' '.repeat((widths[index] ?? 0) - [...cell].length))).join('  ').trimEnd())
    .join('\n');
}
