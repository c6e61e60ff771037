/**
 * Makes a closed standard output (the reader went away: `nox-mesh-host owned --json | head`)
 * end the process quietly with status 0, the way command-line tools do, instead of an unhandled
 * EPIPE with a stack trace. Any other error on the stream is still thrown.
 */
export function quietOnClosedOutput(stream: NodeJS.WriteStream = process.stdout, exit: (code: number) => void = (code) => process.exit(code)): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') {
      exit(0);
      return;
    }
    throw error;
  });
}
