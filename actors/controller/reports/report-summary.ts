import type { Report, ResourceOutcome } from '../../../schema/report';

/**
 * A report in brief: how many resources came out each way, and why the host refused the
 * declaration whole when it did. What `nodes` and status read instead of the whole report.
 */
export interface ReportSummary {
  outcomes: Partial<Record<ResourceOutcome, number>>;
  refused?: string;
}

/** The summary of one report. */
export function reportSummary(report: Report): ReportSummary {
  const outcomes: Partial<Record<ResourceOutcome, number>> = {};
  for (const result of report.results) outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
  return { outcomes, ...(report.refused === undefined ? {} : { refused: report.refused.reason }) };
}

/** The keys of resources that did not come out as declared: failed, or refused by the host. */
export function troubledKeys(report: Report): string[] {
  return report.results.filter((result) => result.outcome === 'failed' || result.outcome === 'refused').map((result) => result.key);
}
