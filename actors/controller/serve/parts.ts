import { certificatePart } from '../broker/certificate.part';
import { busRepairPart } from '../declarations/bus-repair.part';
import { declarationsPart } from '../declarations/declarations.part';
import { durationsPart } from '../durations/durations.part';
import { enrolmentPart } from '../enrolment/enrolment.part';
import { handActsPart } from '../hand-acts/hand-acts.part';
import { plansPart } from '../plans/plans.part';
import { presencePart, type PresenceOptions } from '../presence/presence.part';
import { releasePart } from '../release/release.part';
import { recentReportsPart } from '../reports/recent-reports.part';
import { secretsPart } from '../secrets/secrets.part';
import { seatsPart } from '../seats/seats.part';
import { provisionsPart } from '../provisions/provisions.part';
import { tokensPart } from '../tokens/tokens.part';
import { heartbeatTrackerPart, reportReceiverPart, type NodeNews } from './node-news.part';
import type { PartGroup } from './parts.service';

/** Verbs registered by parts that do not say they only read (see VerbOptions.query). */
export const KNOWN_QUERIES: readonly string[] = ['nodes.list'];

/** Verbs registered by parts that do not say their answer carries a secret (see VerbOptions.secretAnswer). */
export const KNOWN_SECRET_ANSWERS: readonly string[] = ['token.issue'];

/**
 * The parts `mesh-control serve` runs, grouped into children of the supervision tree (each
 * child restarted on its own). A part adds itself to a group here: one import and one entry.
 * `nodes` rides with the status child (serveController), both answering what the mesh is.
 * `readBackEveryMs` is how often the bus's self-repair reads the stream back (five minutes);
 * `presence` how often silence is judged, against which heartbeat periods. The heartbeats
 * child both hears nodes and judges their silence: a node is back by a heartbeat and away by
 * the lack of them.
 */
export function controllerPartGroups(news: NodeNews, readBackEveryMs?: number, presence: Omit<PresenceOptions, 'news'> = {}): PartGroup[] {
  return [
    { id: 'reports', parts: [reportReceiverPart(news)] },
    { id: 'heartbeats', parts: [heartbeatTrackerPart(news), presencePart({ ...presence, news })] },
    // Reports are taken before enrolments are answered: a node's first report follows its enrolment closely.
    { id: 'enrolment', parts: [tokensPart, enrolmentPart], after: ['reports', 'heartbeats'], secretAnswers: KNOWN_SECRET_ANSWERS },
    // The composer and sender: declarations (and the overlays missed while no controller acted),
    // release, and the read-back that repairs the stream and the nodes' consumers.
    { id: 'declarations', parts: [declarationsPart, releasePart, busRepairPart(readBackEveryMs), certificatePart] },
    // Modules, assignment, push and staged rollout plans, which send through the composer, and
    // the secrets a module's files name, the seats modules and people hold, and provisions.
    { id: 'plans', parts: [plansPart(), secretsPart, seatsPart, provisionsPart], after: ['declarations'] },
    // What people did by hand, how long things took as they were heard (hand-acts, durations), and
    // the latest reports kept (reports.recent, for the dashboard), all read from the store.
    { id: 'records', parts: [handActsPart, durationsPart(), recentReportsPart] },
  ];
}
