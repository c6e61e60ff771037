import * as z from 'zod';
import type { DoctorReport } from '../../../schema/doctor';
import type { ControllerContext } from '../controller-context';
import type { ControllerPart } from '../serve/controller-parts';
import type { DoctorBoard } from './doctor-board';
import type { DoctorProbe } from './doctor-probe';
import { formatDoctor } from './format-doctor';
import { runProbes } from './run-probes';

/** Five minutes (seed 003): how often the serving controller runs the doctor's probes. */
export const DOCTOR_EVERY_MS = 5 * 60_000;

/**
 * Thirty seconds: how long after start the first run waits, so the read-back and the overlays
 * a starting controller sends have put the bus right before the doctor says it is wrong.
 */
export const DOCTOR_FIRST_AFTER_MS = 30_000;

/** Options of {@link doctorPart}. */
export interface DoctorPartOptions {
  board: DoctorBoard;
  /** The probes, over the controller's context. */
  probes(ctx: ControllerContext): DoctorProbe[];
  /** How often the probes run (DOCTOR_EVERY_MS); short in tests. */
  everyMs?: number;
  /** The bound of each probe (PROBE_BOUND_MS); short in tests. */
  boundMs?: number;
  /** How long after start the first periodic run waits (DOCTOR_FIRST_AFTER_MS, or `everyMs` when shorter); short in tests. */
  firstAfterMs?: number;
}

/**
 * The doctor in `mesh-control serve`: runs every probe `firstAfterMs` after start and every `everyMs` after, keeps the
 * last run on the board (which logs what changed and tells status), and answers the verb
 * `doctor` with a run of its own.
 */
export function doctorPart(options: DoctorPartOptions): ControllerPart {
  const everyMs = options.everyMs ?? DOCTOR_EVERY_MS;
  return {
    name: 'doctor',
    start: async (ctx, verbs) => {
      const probes = options.probes(ctx);
      let running: Promise<DoctorReport> | undefined;
      const run = (): Promise<DoctorReport> => {
        const started = runProbes(probes, { source: 'serving', now: ctx.now, ...(options.boundMs === undefined ? {} : { boundMs: options.boundMs }) }).then((report) => {
          options.board.publish(report);
          return report;
        });
        running = started.finally(() => {
          if (running === tracked) running = undefined;
        });
        const tracked = running;
        return started;
      };
      // The verb runs the probes afresh: a run already under way may have looked before what
      // the person asking about just did.
      verbs.register(
        'doctor',
        z.strictObject({}),
        async (callCtx) => {
          const report = await run();
          return { result: report, text: formatDoctor(report, callCtx.now()) };
        },
        { query: true },
      );
      // A periodic run due while another runs is skipped.
      const periodic = (): void => {
        if (running !== undefined) return;
        run().catch((error: unknown) => ctx.log(`doctor: the probes could not be run (tried again in ${Math.round(everyMs / 1000)} s): ${error instanceof Error ? error.message : String(error)}`, { level: 'error' }));
      };
      let timer: NodeJS.Timeout | undefined;
      const first = setTimeout(() => {
        periodic();
        timer = setInterval(periodic, everyMs);
      }, options.firstAfterMs ?? Math.min(DOCTOR_FIRST_AFTER_MS, everyMs));
      return {
        stop: async () => {
          clearTimeout(first);
          clearInterval(timer);
          await running?.catch(() => undefined);
        },
      };
    },
  };
}
