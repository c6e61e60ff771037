import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { createActor, type Actor } from 'xstate';
import { SHAPES_FOR_HOST_KIND } from '../../schema/resource';
import type { LastDeclaration } from '../../schema/host-state';
import { createAdopter } from '../../actors/host/adoption/adoption.actor';
import { directoryApplier } from '../../actors/host/appliers/directory.applier';
import { fileApplier } from '../../actors/host/appliers/file.applier';
import { DEFAULT_SETTINGS, openHost, type HostContext } from '../../actors/host/host-context';
import { admitDeclaration, type AdmissionRules } from '../../actors/host/link/admit-declaration';
import { startDeclarationIntake, type DeclarationIntake } from '../../actors/host/link/declaration-intake';
import { LinkClock } from '../../actors/host/link/link-clock';
import { recordDeclaration } from '../../actors/host/link/record-declaration';
import { ReportSender } from '../../actors/host/link/report-sender';
import { reconcilePass, type PassReport } from '../../actors/host/reconcile/reconcile-pass';
import { reconcileLogic } from '../../actors/host/reconcile/reconcile.actor';
import { HostStore } from '../../actors/host/store/host-store';
import { ProcessRunner } from '../../actors/shared/process/command-runner';
import type { SigningKeyPair } from '../../actors/shared/crypto';
import { enrolledState } from '../host/enrolled-store';
import { connectMember, type FleetBroker, type FleetMember } from './fleet-member';

/** A day: no drift pass falls inside a measurement. */
const NO_DRIFT_MS = 24 * 60 * 60 * 1000;

/**
 * One simulated node running the host's own path for a declaration, on a machine root of its
 * own: its connection (pinned, its own nkey), the declaration intake on its durable consumer,
 * the gate (admitDeclaration: signature, node, epoch, generation), the store record, the
 * reconcile actor and its pass (converge through the real file and directory appliers), and
 * the report (ReportSender). What it leaves out of `nox-mesh-host run`: the link machine's
 * backoff and rouse, heartbeats, the start pass, and the profile (it takes files and
 * directories only), none of which a pushed declaration passes through.
 */
export class SimulatedHost {
  /** Lines the host would have logged: refusals and intake trouble. */
  readonly notes: string[] = [];
  private intake: DeclarationIntake | undefined;

  private constructor(
    readonly member: FleetMember,
    readonly connection: NatsConnection,
    private readonly host: HostContext,
    private readonly actor: Actor<ReturnType<typeof reconcileLogic>>,
  ) {}

  /**
   * Makes the node's enrolled store under `rootsDir/<name>`, opens its host and its connection,
   * and starts taking declarations. The consumer should exist already (the controller makes it
   * at enrolment); until it does the intake waits, as the host's does.
   */
  static async start(member: FleetMember, broker: FleetBroker, controller: Pick<SigningKeyPair, 'public_key'>, rootsDir: string): Promise<SimulatedHost> {
    const root = path.join(rootsDir, member.name);
    const stateDir = path.join(root, DEFAULT_SETTINGS.stateDir);
    await new HostStore(stateDir).save(enrolledState({
      node: member.name,
      identity: member.identity,
      controller: { public_key: controller.public_key },
      brokerUrl: broker.url,
      brokerFingerprint: broker.fingerprint,
    }));
    const host = await openHost({ ...DEFAULT_SETTINGS, root, stateDir }, {
      runner: new ProcessRunner(),
      appliers: { file: fileApplier, directory: directoryApplier },
      adopter: createAdopter(),
    });
    let connection: NatsConnection;
    try {
      connection = await connectMember(member, broker);
    } catch (error) {
      await host.close();
      throw error;
    }
    const rules: AdmissionRules = { hostUnit: DEFAULT_SETTINGS.hostUnit, root, stateDir, shapes: SHAPES_FOR_HOST_KIND.resident };
    const clock = new LinkClock(null);
    clock.up(host.now());
    const reports = new ReportSender({ node: member.name, state: host.state, clock, connection: () => connection, now: host.now });
    // The start pass's report would have reserved the first block of report numbers before
    // any push reached a running host; this host has no start pass, so it reserves them here.
    try {
      await reports.prepare();
    } catch (error) {
      await connection.close().catch(() => undefined);
      await host.close();
      throw error;
    }
    const answering = new WeakMap<PassReport, LastDeclaration | null>();
    const actor = createActor(reconcileLogic({
      pass: async (reasons, signal) => {
        const held = host.state.current().last_declaration;
        const report = await reconcilePass(host, reasons, signal);
        answering.set(report, held);
        return report;
      },
      onPass: (report) => {
        void reports.send({ results: report.results, held: answering.get(report) ?? null }).catch((error: unknown) => simulated.notes.push(`could not report: ${String(error)}`));
      },
      driftIntervalMs: NO_DRIFT_MS,
    }));
    const simulated = new SimulatedHost(member, connection, host, actor);
    actor.start();
    simulated.intake = startDeclarationIntake(connection, member.name, {
      take: async (data) => {
        const state = host.state.current();
        const admission = admitDeclaration(parseJson(data), state, rules);
        if (!admission.ok) {
          simulated.notes.push(`refused a declaration (${admission.reason}): ${admission.detail}`);
          await reports.send({ results: [], held: state.last_declaration, refused: admission });
          return;
        }
        await host.state.update((s) => recordDeclaration(s, admission));
        actor.send({ type: 'declaration.arrived' });
      },
      note: (line) => simulated.notes.push(line),
    });
    return simulated;
  }

  /** Stops taking declarations, lets a pass under way finish, closes the connection and the store. */
  async stop(): Promise<void> {
    this.actor.send({ type: 'host.stopping' });
    await this.intake?.stop();
    this.actor.stop();
    await this.connection.close().catch(() => undefined);
    await this.host.close();
  }
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return undefined;
  }
}
