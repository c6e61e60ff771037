/**
 * The CPU one host spends on a pushed declaration, without the bus: node scripts/run-ts.cjs
 * bench/fleet/push-path-cpu.ts [DECLARATIONS]. One host on a root under /dev/shm (or under
 * PUSH_PATH_DIR) takes
 * DECLARATIONS new generations in a row (after 20 not counted) through the path a
 * SimulatedHost takes them: the gate (admitDeclaration), the store record, a reconcile pass
 * through the real file and directory appliers, and the report (ReportSender, onto a
 * connection that only counts). Prints one JSON line: wall and CPU ms per declaration (user, system),
 * store writes per declaration, and the report's size.
 *
 * The fleet bench's figure mixes this with the client's TLS and the broker, and moves with
 * whatever else shares the machine; this one isolates the host's own code, for comparing two
 * builds one after the other.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAdopter } from '../../actors/host/adoption/adoption.actor';
import { directoryApplier } from '../../actors/host/appliers/directory.applier';
import { fileApplier } from '../../actors/host/appliers/file.applier';
import { DEFAULT_SETTINGS, openHost } from '../../actors/host/host-context';
import { admitDeclaration } from '../../actors/host/link/admit-declaration';
import { LinkClock } from '../../actors/host/link/link-clock';
import { recordDeclaration } from '../../actors/host/link/record-declaration';
import { ReportSender } from '../../actors/host/link/report-sender';
import { reconcilePass } from '../../actors/host/reconcile/reconcile-pass';
import { HostStore } from '../../actors/host/store/host-store';
import { generateNodeIdentity, generateSigningKeyPair } from '../../actors/shared/crypto';
import { ProcessRunner } from '../../actors/shared/process/command-runner';
import { SHAPES_FOR_HOST_KIND } from '../../schema/resource';
import { enrolledState } from '../host/enrolled-store';
import { signedDeclaration } from '../host/signed-declaration';
import { roundResources } from './push-fleet';
import { runMeasurementWorker } from './run-measurement-worker';
import { wholeNumbersAboveZero } from './whole-numbers-above-zero';

const WARM_UP = 20;

runMeasurementWorker(async () => {
  // PUSH_PATH_DIR puts the root on another file system (a disk, where syncs cost time).
  const args = process.argv.slice(2);
  const [count] = args.length === 0 ? [1000] : wholeNumbersAboveZero(args, 1, 'push-path-cpu.ts [DECLARATIONS]');
  const parent = process.env.PUSH_PATH_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());
  const controller = generateSigningKeyPair();
  const root = mkdtempSync(path.join(parent, 'mesh-push-path-'));
  try {
    const stateDir = path.join(root, DEFAULT_SETTINGS.stateDir);
    await new HostStore(stateDir).save(enrolledState({ node: 'n1', identity: generateNodeIdentity(), controller, brokerUrl: 'tls://127.0.0.1:4222', brokerFingerprint: '0'.repeat(64) }));
    const host = await openHost({ ...DEFAULT_SETTINGS, root, stateDir }, { runner: new ProcessRunner(), appliers: { file: fileApplier, directory: directoryApplier }, adopter: createAdopter() });
    try {
      let saves = 0;
      const save = host.store.save.bind(host.store);
      host.store.save = (state, options) => {
        saves += 1;
        return save(state, options);
      };
      const clock = new LinkClock(null);
      clock.up(host.now());
      let reportBytes = 0;
      const counting = { publish: (_subject: string, data?: string | Uint8Array) => { reportBytes += data?.length ?? 0; }, flush: async () => undefined };
      const reports = new ReportSender({ node: 'n1', state: host.state, clock, connection: () => counting, now: host.now });
      await reports.prepare();
      const rules = { hostUnit: DEFAULT_SETTINGS.hostUnit, root, stateDir, shapes: SHAPES_FOR_HOST_KIND.resident };
      const wire = Array.from({ length: WARM_UP + count }, (_, index) => new TextEncoder().encode(JSON.stringify(signedDeclaration({ node: 'n1', generation: index + 1, resources: roundResources(index) }, controller.secret_key).envelope)));
      const take = async (index: number): Promise<void> => {
        const admission = admitDeclaration(JSON.parse(new TextDecoder().decode(wire[index])), host.state.current(), rules);
        if (!admission.ok) throw new Error(`declaration ${index + 1} refused: ${admission.detail}`);
        await host.state.update((state) => recordDeclaration(state, admission));
        const held = host.state.current().last_declaration;
        const report = await reconcilePass(host, ['declaration']);
        await reports.send({ results: report.results, held });
      };
      for (let index = 0; index < WARM_UP; index += 1) await take(index);
      saves = 0;
      reportBytes = 0;
      const before = process.cpuUsage();
      const started = performance.now();
      for (let index = WARM_UP; index < WARM_UP + count; index += 1) await take(index);
      const cpu = process.cpuUsage(before);
      const wallMs = performance.now() - started;
      const per = (micros: number): number => Math.round((micros / 1000 / count) * 1000) / 1000;
      return { declarations: count, wallMsPerDeclaration: Math.round((wallMs / count) * 1000) / 1000, cpuMsPerDeclaration: per(cpu.user + cpu.system), userMs: per(cpu.user), systemMs: per(cpu.system), storeWritesPerDeclaration: saves / count, reportBytes: Math.round(reportBytes / count) };
    } finally {
      await host.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
