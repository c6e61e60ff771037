/**
 * Waiting on a host process a test started, by what it printed: `until` looks again every
 * `pollMs` until `look` gives something other than undefined, and on timeout quotes everything
 * the host said; `said` waits for a line matching `pattern` printed after offset `from`.
 */
export function hostWaits(output: () => string, pollMs = 50) {
  async function until<T>(what: string, look: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = await look();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the host said:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
  const said = (pattern: RegExp, from = 0): Promise<true> => until(`the host to say ${pattern}`, () => (pattern.test(output().slice(from)) ? true : undefined));
  return { until, said };
}
