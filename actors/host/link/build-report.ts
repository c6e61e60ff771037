import type { HostState, LastDeclaration } from '../../../schema/host-state';
import { parseContract } from '../../../schema/parse';
import { Report, type ResourceResult } from '../../../schema/report';
import type { Refused } from './admit-declaration';
import { utcTimestamp } from '../../shared/time/utc-timestamp';

/** What a report says besides what the store holds. */
export interface ReportFacts {
  /** The node sending it. */
  node: string;
  /** The store as it stands. */
  state: HostState;
  /** This report's number, reserved in the store before the report is built (ReportNumbers). */
  reportSequence: number;
  /** The declaration the results answer (the one held when the pass began); null for none. */
  declaration: LastDeclaration | null;
  /** Per-resource results of a pass; empty for a refusal. */
  results: readonly ResourceResult[];
  /** Set when the report is about a declaration refused whole. */
  refused?: Refused;
  /** See Report.seconds_since_linked. */
  secondsSinceLinked: number | null;
  versionRunning: string;
  now: Date;
}

const DETAIL_MAX = 4096;
const OUTPUT_MAX = 16384;

/**
 * The report less what it copies from the store (what the host owns, the briefing): those were
 * checked against the same schemas (Owned, Briefing) by every store write that holds them, and
 * parsing the whole owned list again for every report cost more than the rest of the report.
 */
const ReportOwnPart = Report.omit({ owned: true, briefing: true });

/**
 * The report for the controller, checked against the contract before it leaves (the part the
 * store did not check already: see ReportOwnPart). Details and action output are cut to the
 * contract's bounds (output keeps its tail, where the error usually is) so a chatty resource
 * cannot make the whole account unsendable.
 */
export function buildReport(facts: ReportFacts): Report {
  const { state } = facts;
  const own: Omit<Report, 'owned' | 'briefing'> = {
    node: facts.node,
    epoch: state.highest_epoch,
    sequence: state.sequence,
    report_sequence: facts.reportSequence,
    declaration_digest: facts.declaration?.digest ?? null,
    generation: facts.declaration?.applied_generation ?? 0,
    results: facts.results.map(bounded),
    version_running: facts.versionRunning,
    seconds_since_linked: facts.secondsSinceLinked,
    ...(facts.refused === undefined ? {} : { refused: refusedPart(facts.refused) }),
    sent_at: utcTimestamp(facts.now),
  };
  const checked = parseContract(ReportOwnPart, own, 'report');
  // In the contract's order, as a whole parse gives it: the controller's log reads the same.
  return {
    node: checked.node,
    epoch: checked.epoch,
    sequence: checked.sequence,
    report_sequence: checked.report_sequence,
    declaration_digest: checked.declaration_digest,
    generation: checked.generation,
    results: checked.results,
    owned: state.owned,
    version_running: checked.version_running,
    seconds_since_linked: checked.seconds_since_linked,
    ...(checked.refused === undefined ? {} : { refused: checked.refused }),
    ...(state.briefing === null ? {} : { briefing: state.briefing }),
    sent_at: checked.sent_at,
  };
}

function refusedPart(refused: Refused): NonNullable<Report['refused']> {
  return {
    reason: refused.reason,
    ...(refused.generation === undefined ? {} : { generation: refused.generation }),
    ...(refused.epoch === undefined ? {} : { epoch: refused.epoch }),
    detail: cut(refused.detail, DETAIL_MAX),
  };
}

function bounded(result: ResourceResult): ResourceResult {
  return {
    ...result,
    ...(result.detail === undefined ? {} : { detail: cut(result.detail, DETAIL_MAX) }),
    ...(result.output === undefined ? {} : { output: result.output.length > OUTPUT_MAX ? result.output.slice(-OUTPUT_MAX) : result.output }),
  };
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
