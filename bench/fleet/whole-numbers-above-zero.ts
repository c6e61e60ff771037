/**
 * The first `count` of a worker's arguments as whole numbers above zero. Anything else (too few,
 * a fraction, a word) is a usage error quoting `usage` and every argument the worker was given.
 */
export function wholeNumbersAboveZero(args: readonly string[], count: number, usage: string): number[] {
  const values = args.slice(0, count).map(Number);
  if (values.length < count || !values.every((value) => Number.isInteger(value) && value > 0)) {
    throw new Error(`usage: ${usage} (whole numbers above 0), got ${process.argv.slice(2).join(' ')}`);
  }
  return values;
}
