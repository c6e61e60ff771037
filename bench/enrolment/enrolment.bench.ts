import { promises as fs } from 'node:fs';
import path from 'node:path';
import { MeshRig } from '../../e2e/mesh-rig';
import { jsonOf, runCli, succeeded } from '../../e2e/run-cli';
import type { Enrolled } from '../../actors/host/enrolment/enrol';
import { byMode, type BenchContext, type BenchSection } from '../bench-context';
import { failed, floorOf, measured, type Figure, type FigureHead, type Goal } from '../figure';
import { selfFloor } from '../fleet/nats-floor';
import { ensureBundle } from '../host/host-bundle';
import { WatchedProcess } from '../watched-process';
import { ABSENCE_AFTER, ABSENCE_BEFORE, longAbsence, type BenchHost } from './long-absence';
import { MeshWatch } from './mesh-watch';

const ENROLMENT_GOAL: Goal = { text: 'under 1 s', max: 1000, on: 'p99' };

const ENROLMENT: FigureHead = { id: 'enrolment.per_node', group: 'enrolment', label: 'enrolment: token → overlay applied and reported, per node', unit: 'ms' };
const ENROL_VERB: FigureHead = { id: 'enrolment.enrol_verb', group: 'enrolment', label: '`nox-mesh-host enrol --token` alone, spawn to exit', unit: 'ms' };
const PUSH_ONE: FigureHead = { id: 'enrolment.push_one_real', group: 'enrolment', label: 'push-to-applied, 1 node, real processes (`node declare`)', unit: 'ms' };
const LONG_ABSENCE: FigureHead = {
  id: 'enrolment.long_absence',
  group: 'enrolment',
  label: `the long absence: back from away, ${ABSENCE_BEFORE.toLocaleString('en')} files → ${ABSENCE_AFTER.toLocaleString('en')} others in one pass`,
  unit: 'ms',
};

/**
 * Enrolment and a push on the real processes: a MeshRig (`mesh-control init`, `broker`,
 * `serve` on the embedded store, from the checkout) and machines each running the bundled
 * `nox-mesh-host run` on a root of its own, enrolled one after another with a token each,
 * then declared a file again and again with `mesh-control node declare`.
 */
export const enrolmentSection: BenchSection = {
  name: 'enrolment',
  async run(ctx) {
    const bundle = await ensureBundle(ctx.repoDir, ctx.say);
    const machines = byMode(ctx, 2, 10);
    const pushes = byMode(ctx, 5, 20);
    ctx.say('enrolment: raising a mesh of real processes (init, broker, serve)');
    const rig = new MeshRig({ dir: path.join(ctx.workDir, 'rig'), hosts: [] });
    const hosts: WatchedProcess[] = [];
    let watch: MeshWatch | undefined;
    const figures: Figure[] = [];
    try {
      await rig.start();
      watch = await MeshWatch.open(rig.meshDir);
      const floor = floorOf('raw NATS request/reply, one at a time', await selfFloor(watch.nc, byMode(ctx, 50, 200), new Uint8Array(1024)));

      ctx.say(`enrolment: ${machines} machines, one after another`);
      const enrolments: number[] = [];
      const verbs: number[] = [];
      let enrolledName: string | undefined;
      let enrolledHost: BenchHost | undefined;
      try {
        for (let index = 1; index <= machines; index += 1) {
          const name = `bench-${String(index).padStart(2, '0')}`;
          const root = path.join(ctx.workDir, 'machines', name);
          await fs.mkdir(path.join(root, 'etc'), { recursive: true });
          await fs.writeFile(path.join(root, 'etc', 'hostname'), `${name}\n`);
          const start = (): WatchedProcess => {
            const started = new WatchedProcess([process.execPath, bundle, 'run', '--root', root], { cwd: ctx.workDir });
            hosts.push(started);
            return started;
          };
          const host = start();
          await host.waitFor(/^hosted: /m);
          const token = (await rig.issueToken({ new: true })).token;
          const mark = watch.mark();
          const started = performance.now();
          const enrolled = jsonOf<Enrolled>(await runCli([process.execPath, bundle, 'enrol', '--token', token, '--root', root, '--json'], { cwd: ctx.workDir, label: `nox-mesh-host enrol (${name})` }));
          verbs.push(performance.now() - started);
          const reported = await watch.report((report) => report.node === enrolled.node && report.declaration_digest !== null && report.results.length > 0, { from: mark.reports, timeoutMs: 30_000 });
          const failures = reported.value.results.filter((result) => result.outcome === 'failed');
          if (failures.length > 0) throw new Error(`node ${enrolled.node} failed its overlay: ${failures.map((result) => `${result.key} ${result.detail ?? ''}`).join('; ')}`);
          enrolments.push(reported.at - started);
          enrolledName = enrolled.node;
          enrolledHost = { process: host, start };
        }
        figures.push(measured(ENROLMENT, enrolments, {
          goal: ENROLMENT_GOAL,
          floor,
          note: `the token already issued; from spawning \`enrol\` to the node's report on its overlay, seen on the broker; hosts are the bundle, the controller the checkout, on the embedded store; the overlay grows by one peer per node`,
        }));
        figures.push(measured(ENROL_VERB, verbs, { floor, note: 'its share of the above: pinned dial, enrolment request and answer, store written' }));
      } catch (error) {
        figures.push(failed(ENROLMENT, error, ENROLMENT_GOAL), failed(ENROL_VERB, error));
      }

      if (enrolledName === undefined) {
        figures.push(failed(PUSH_ONE, 'no node enrolled to push to'));
      } else {
        try {
          ctx.say(`enrolment: ${pushes} declarations to node ${enrolledName} with \`mesh-control node declare\``);
          figures.push(measured(PUSH_ONE, await pushToOne(ctx, rig, watch, enrolledName, pushes), {
            floor,
            note: 'the declaration seen on the broker as the controller publishes it → the node\'s report on it seen there; each push changes one file',
          }));
        } catch (error) {
          figures.push(failed(PUSH_ONE, error));
        }
      }
      if (enrolledName === undefined || enrolledHost === undefined) {
        figures.push(failed(LONG_ABSENCE, 'no node enrolled to send away'));
      } else {
        try {
          ctx.say(`enrolment: the long absence of node ${enrolledName}`);
          figures.push(measured(LONG_ABSENCE, await longAbsence(ctx, rig, watch, enrolledName, enrolledHost, byMode(ctx, 1, 3)), {
            note: `the bundled host stopped while its declaration moved on, started again: from its spawn to its report on the newest declaration, seen on the broker; that report applied every new file and removed every old one`,
          }));
        } catch (error) {
          figures.push(failed(LONG_ABSENCE, error));
        }
      }
    } finally {
      await Promise.all(hosts.map((host) => host.stop()));
      await watch?.close();
      await rig.stop();
    }
    return figures;
  },
};

async function pushToOne(ctx: BenchContext, rig: MeshRig, watch: MeshWatch, node: string, pushes: number): Promise<number[]> {
  const times: number[] = [];
  const file = path.join(ctx.workDir, 'declare.json');
  for (let push = 1; push <= pushes; push += 1) {
    await fs.writeFile(file, JSON.stringify({ resources: [{ shape: 'file', path: '/etc/mesh-bench-push', content: { text: `push ${push}\n` } }] }));
    const mark = watch.mark();
    succeeded(await runCli([process.execPath, path.join(ctx.repoDir, 'bin', 'mesh-control'), 'node', 'declare', node, file, '--dir', rig.meshDir], { cwd: ctx.repoDir }));
    const sent = await watch.declaration(node, { from: mark.declarations });
    const reported = await watch.report((report) => report.node === node && report.declaration_digest === sent.value.digest, { from: mark.reports });
    if (reported.value.results.some((result) => result.outcome === 'failed')) throw new Error(`node ${node} failed push ${push}: ${JSON.stringify(reported.value.results)}`);
    times.push(reported.at - sent.at);
  }
  return times;
}
