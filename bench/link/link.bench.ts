import { byMode, type BenchSection } from '../bench-context';
import { measured, type Figure } from '../figure';
import { measureLink } from './link-measurements';

const IDS = ['link.rouse.frozen', 'link.rouse.held', 'link.rouse.working', 'link.dead.silent'] as const;

/**
 * The link section of `npm run bench`: the figures of bench/link/link-measurements.ts, with the
 * issue's goals (a rouse relinks in under a second; a silent dead link is found within 30 s).
 */
export const linkSection: BenchSection = {
  name: 'link',
  async run(ctx): Promise<Figure[]> {
    const figures = await measureLink({
      runs: byMode(ctx, 10, 50),
      heldRuns: byMode(ctx, 1, 3),
      deadLinkRuns: byMode(ctx, 1, 3),
    }, ctx.say);
    return figures.map((figure, index) => measured(
      { id: IDS[index] ?? `link.${index}`, group: 'link', label: figure.label, unit: 'ms' },
      figure.values,
      { goal: { text: `under ${figure.goalMs / 1000} s`, max: figure.goalMs, on: 'p99' } },
    ));
  },
};
