/**
 * clipanion's Node platform module (`clipanion/lib/platform/node.js`), as the host bundle has it
 * (scripts/build-host.ts puts it in clipanion's place). clipanion's own loads `tty` as clipanion
 * loads, only to ask `tty.WriteStream.prototype.getColorDepth()`, and `tty` then stays resident
 * for the life of a host whose output is never a terminal (the init's journal, the launcher's
 * log): some 0.15 MB of its idle 50 MB.
 *
 * The colour depth is the same answer where it matters. When the standard output is a terminal,
 * it is a `tty.WriteStream` already and is asked itself (the same function, reading the same
 * environment). When it is not, the output is plain unless FORCE_COLOR asks for colour, and then
 * `tty` is loaded to say how much. clipanion's own would also colour output piped into another
 * program or a file whenever TERM names a colour terminal; escape codes in a journal or a
 * `| grep` help nobody.
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Writable } from 'node:stream';

/** What clipanion asks of a platform: see clipanion/lib/platform/node.d.ts. */
interface CaptureContext {
  stdout: Writable;
  stderr: Writable;
}

/** Bits of colour the CLI may use: 1 (none), 4, 8 or 24. */
export function getDefaultColorDepth(stdout: Pick<NodeJS.WriteStream, 'isTTY'> & Partial<Pick<NodeJS.WriteStream, 'getColorDepth'>> = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  if (stdout.isTTY && typeof stdout.getColorDepth === 'function') return stdout.getColorDepth(env);
  if (env.FORCE_COLOR === undefined || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return 1;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const tty = require('node:tty') as typeof import('node:tty');
  return tty.WriteStream.prototype.getColorDepth(env);
}

let contextStorage: AsyncLocalStorage<CaptureContext> | undefined;

/**
 * clipanion's own, unchanged: when a command runs with other streams than the process's, writes
 * to process.stdout and stderr made while it runs go to the command's streams. `own` is the
 * process's streams (a test gives its own); the first call that captures patches them for good.
 */
export function getCaptureActivator(context: CaptureContext, own: CaptureContext = process): (<T>(fn: () => T) => T) | null {
  let storage = contextStorage;
  if (storage === undefined) {
    if (context.stdout === own.stdout && context.stderr === own.stderr) return null;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { AsyncLocalStorage: LazyAsyncLocalStorage } = require('node:async_hooks') as typeof import('node:async_hooks');
    storage = contextStorage = new LazyAsyncLocalStorage<CaptureContext>();
    const captured = storage;
    for (const name of ['stdout', 'stderr'] as const) {
      const stream = own[name] as unknown as { _write: (chunk: unknown, encoding: BufferEncoding, cb: (error?: Error | null) => void) => void };
      const original = stream._write;
      stream._write = function (chunk, encoding, cb) {
        const active = captured.getStore();
        if (active === undefined) return original.call(this, chunk, encoding, cb);
        active[name].write(chunk, encoding, cb);
      };
    }
  }
  const active = storage;
  return (fn) => active.run(context, fn);
}
