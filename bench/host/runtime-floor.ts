import { promises as fs } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WatchedProcess } from '../watched-process';

/**
 * Written beside the bench's work and loaded with `--require` into one extra start of the host:
 * every quarter second it writes the built-in modules the process has loaded so far to the file
 * named by MESH_BENCH_BUILTINS_OUT. That start is never measured.
 */
const BUILTINS_PROBE = `'use strict';
const { writeFileSync } = require('node:fs');
const out = process.env.MESH_BENCH_BUILTINS_OUT;
const write = () => {
  const names = process.moduleLoadList.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => entry.slice('NativeModule '.length));
  writeFileSync(out, JSON.stringify(names));
};
setInterval(write, 250).unref();
`;

/** Requires the modules named (as JSON) in MESH_BENCH_FLOOR_MODULES, says so, and idles. */
const FLOOR_PROGRAM = `'use strict';
for (const name of JSON.parse(process.env.MESH_BENCH_FLOOR_MODULES)) require(name);
process.stdout.write('floor: ready\\n');
setInterval(() => {}, 1 << 30);
`;

/** The public ones among the built-in modules a process loaded (`fs`, `tls`, `child_process`...). */
export function publicBuiltins(loaded: readonly string[]): string[] {
  const known = new Set(builtinModules);
  return [...new Set(loaded.filter((name) => known.has(name)))].sort();
}

/**
 * The public built-in modules an enrolled host has loaded `settleMs` after its first pass: one
 * start of `argv` (the host's command line, `run` over an enrolled root) with a probe required
 * before it. What the runtime floor loads, so the floor follows the host's code as it changes.
 */
export async function builtinsLoadedBy(argv: readonly [string, ...string[]], options: { workDir: string; env: NodeJS.ProcessEnv; settleMs: number }): Promise<string[]> {
  const probe = path.join(options.workDir, 'builtins-probe.cjs');
  const out = path.join(options.workDir, 'builtins-loaded.json');
  await fs.writeFile(probe, BUILTINS_PROBE);
  await fs.rm(out, { force: true });
  const [node, ...rest] = argv;
  const host = new WatchedProcess([node, '--require', probe, ...rest], { cwd: options.workDir, env: { ...options.env, MESH_BENCH_BUILTINS_OUT: out } });
  try {
    await host.waitFor(/^pass \([^)]*\): /m, { timeoutMs: 60_000 });
    await sleep(options.settleMs);
    const loaded = JSON.parse(await fs.readFile(out, 'utf8')) as string[];
    const names = publicBuiltins(loaded);
    if (names.length === 0) throw new Error(`the probe found no built-in module loaded by ${argv.join(' ')}: ${out} holds ${JSON.stringify(loaded).slice(0, 200)}`);
    return names;
  } finally {
    await host.stop();
  }
}

/**
 * Starts the runtime floor: Node itself (`node`, default this one: the runtime the host is
 * measured on), with `flags` and `env` (the host's V8 flags and the launcher's allocator
 * settings), having required `modules` and nothing else. Resolves once it is idle; the caller
 * measures it and stops it.
 */
export async function startRuntimeFloor(modules: readonly string[], options: { workDir: string; env: NodeJS.ProcessEnv; flags: readonly string[]; node?: string }): Promise<WatchedProcess> {
  const program = path.join(options.workDir, 'runtime-floor.cjs');
  await fs.writeFile(program, FLOOR_PROGRAM);
  const floor = new WatchedProcess([options.node ?? process.execPath, ...options.flags, program], { cwd: options.workDir, env: { ...options.env, MESH_BENCH_FLOOR_MODULES: JSON.stringify(modules) } });
  try {
    await floor.waitFor(/^floor: ready$/m);
  } catch (error) {
    await floor.stop();
    throw error;
  }
  return floor;
}
