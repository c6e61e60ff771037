import v8 from 'node:v8';

/**
 * Keeps V8's young generation at the size it starts with (two 1 MB semi-spaces on 64-bit) for
 * the rest of the process. Call it before the process loads its code.
 *
 * The host process works in bursts (loading its modules, a pass over a thousand files) and then
 * idles for minutes. V8 doubles the young generation whenever a burst keeps it busy, up to 16 MB
 * a semi-space, and hands the memory back only when its memory reducer gets round to it; until
 * then it is resident. Capped, the enrolled host holding 1,000 files idles about 13 MB smaller,
 * and a pass over those files takes as long as before (the objects a pass makes die young).
 *
 * `--max-semi-space-size` says the same thing, but V8 reads it once, when it sizes the heap
 * before any JavaScript runs: the launcher and the single executable give Node no command line
 * to put it on. The growth factor is read each time the young generation would grow, so it can
 * be set from here.
 */
export function capYoungGeneration(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
