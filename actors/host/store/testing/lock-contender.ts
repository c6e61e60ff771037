import { lockStore } from '../store-lock';

// One contender for the store lock, for store-lock.test.ts: waits until the given instant so
// that every contender starts at once, tries to take the lock of the state directory given,
// says `held` or `refused`, and holds what it took until its stdin closes.

async function contend(stateDir: string, startAt: number): Promise<void> {
  while (Date.now() < startAt) await new Promise((resolve) => setImmediate(resolve));
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

void contend(process.argv[2] as string, Number(process.argv[3]));
