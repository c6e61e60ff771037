/**
 * Looks at `condition` every 10 ms until it holds, and returns `performance.now()` at that
 * moment, so a test can both wait for a fact and say how long it took; throws naming `what`
 * (and what `seen` says was there instead) when it does not hold within `timeoutMs`.
 */
export async function eventually(what: string, condition: () => boolean | Promise<boolean>, options: { timeoutMs?: number; seen?: () => string } = {}): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const started = performance.now();
  for (;;) {
    if (await condition()) return performance.now();
    if (performance.now() - started > timeoutMs) {
      throw new Error(`waited ${timeoutMs} ms for ${what}${options.seen === undefined ? '' : `; last seen: ${options.seen()}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
