import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clockTicksPerSecond } from '../proc-stat';
import { mainThreadCpuSeconds } from './thread-cpu';

// Read from a stat line written here, not from a spinning thread: how much CPU a thread gets in
// a given time depends on the machine's load, which a unit test cannot know.

let dir: string;
beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'thread-cpu-')); });
afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

/** A thread's stat line: pid, name, state, then fields 4 to 52, with utime (14) and stime (15) given. */
function statLine(name: string, utime: number, stime: number, cutime = 0): string {
  const after = Array.from({ length: 50 }, (_, index) => String(index + 4));
  after[10] = String(utime);
  after[11] = String(stime);
  after[12] = String(cutime);
  return `4242 (${name}) S ${after.join(' ')}\n`;
}

describe('the main thread\'s CPU time', () => {
  test('is the thread\'s user and system time, not its children\'s, in seconds', async () => {
    const file = path.join(dir, 'stat');
    await fs.writeFile(file, statLine('node', 150, 50, 9999));
    expect(mainThreadCpuSeconds(file)).toBeCloseTo(200 / clockTicksPerSecond(), 9);
  });

  test('reads past a thread name that holds spaces and brackets', async () => {
    const file = path.join(dir, 'stat');
    await fs.writeFile(file, statLine('a (b) c', 7, 3));
    expect(mainThreadCpuSeconds(file)).toBeCloseTo(10 / clockTicksPerSecond(), 9);
  });

  test('says so when the line is cut short, rather than giving a number', async () => {
    const file = path.join(dir, 'stat');
    await fs.writeFile(file, '4242 (node) S 1 2 3\n');
    expect(() => mainThreadCpuSeconds(file)).toThrow(/could not be read: "?4242 \(node\) S 1 2 3/);
  });

  test('reads this process\'s own main thread by default', () => {
    // The entry exists and parses; its value is the bench's to measure, not a test's.
    expect(Number.isFinite(mainThreadCpuSeconds())).toBe(true);
  });
});
