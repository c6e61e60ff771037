import { spawnSync } from 'node:child_process';
import path from 'node:path';

// V8's flags belong to the whole process, so each case runs in a Node of its own: the same
// bursts of short-lived objects a pass makes, with and without the cap, and the size of the
// young generation (new_space) after them.

const repo = path.resolve(__dirname, '..', '..', '..');
const MB = 1024 * 1024;

function youngGenerationAfterBursts(capped: boolean): number {
  const script = `
    const v8 = require('node:v8');
    if (${capped}) require(${JSON.stringify(path.join(__dirname, 'cap-young-generation'))}).capYoungGeneration();
    let kept = [];
    for (let burst = 0; burst < 100; burst += 1) kept = Array.from({ length: 20000 }, (_, i) => ({ i, text: 'line ' + i }));
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    process.stdout.write(String(young.space_size));
  `;
  const run = spawnSync(process.execPath, ['-r', path.join(repo, 'scripts', 'register.cjs'), '-e', script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the measuring process failed: ${run.stderr}`);
  return Number(run.stdout);
}

describe('capYoungGeneration', () => {
  test('keeps the young generation at its starting size through bursts that would grow it', () => {
    const uncapped = youngGenerationAfterBursts(false);
    const capped = youngGenerationAfterBursts(true);

    // Without the cap the same bursts grow it, so the cap is what holds it.
    expect(uncapped).toBeGreaterThan(8 * MB);
    expect(capped).toBeLessThanOrEqual(2 * MB);
  });
});
