import { existsSync } from 'node:fs';
import { lockStore } from '../store-lock';

// One contender for the store lock, for store-lock.test.ts: says `ready`, waits until the go
// file given appears (so that every contender starts at once, however long each took to
// start), tries to take the lock of the state directory given, says `held` or `refused`, and
// holds what it took until its stdin closes.

async function contend(stateDir: string, goFile: string): Promise<void> {
  process.stdout.write('ready\n');
  while (!existsSync(goFile)) await new Promise((resolve) => setImmediate(resolve));
  let release: (() => Promise<void>) | undefined;
  try {
    release = await lockStore(stateDir);
    process.stdout.write('held\n');
  } catch (error) {
    process.stdout.write(`refused ${(error as Error).name}\n`);
    return;
  }
  await new Promise((resolve) => process.stdin.once('close', resolve).resume());
  await release();
}

void contend(process.argv[2] as string, process.argv[3] as string);
