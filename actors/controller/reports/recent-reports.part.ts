import type { ControllerPart } from '../serve/controller-parts';
import { formatRecentReports, recentReports, RecentReportsArgs } from './recent-reports';

/** Answers `reports.recent`, a query: the latest reports kept, in brief (what the dashboard lists). */
export const recentReportsPart: ControllerPart = {
  name: 'recent-reports',
  start: async (_ctx, verbs) => {
    verbs.register('reports.recent', RecentReportsArgs, async (callCtx, args) => {
      const reports = await recentReports(callCtx.store, args.limit);
      return { result: { reports }, text: formatRecentReports(reports) };
    }, { query: true });
    return { stop: async () => undefined };
  },
};
