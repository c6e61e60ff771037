import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const BIN = path.resolve(__dirname, '..', '..', '..', '..', 'bin', 'mesh-control');

/** A `mesh-control serve` process started from the checkout, its standard error kept. */
export interface ServeProcess {
  readonly child: ChildProcess;
  /** Everything it wrote to standard error so far. */
  stderr(): string;
  /** Resolves with `performance.now()` once its standard error matches `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<number>;
  /** Settles when it has ended, with how. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** Starts `mesh-control serve --dir DIR` as its own process, as a service manager would. */
export function startServeProcess(dir: string): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'serve', '--dir', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  const listeners = new Set<() => void>();
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const listener of listeners) listener();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, at: performance.now() }));
  });
  return {
    child,
    stderr: () => text,
    exited,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(text)) return;
          done();
          resolve(performance.now());
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`mesh-control serve did not print ${pattern} within ${timeoutMs} ms; it said:\n${text}`));
        }, timeoutMs);
        const ended = (): void => {
          done();
          reject(new Error(`mesh-control serve ended before printing ${pattern}; it said:\n${text}`));
        };
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('close', ended);
        };
        listeners.add(check);
        child.once('close', ended);
        check();
      }),
  };
}
