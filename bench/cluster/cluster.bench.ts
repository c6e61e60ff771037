import type { BenchSection } from '../bench-context';
import { notMeasured } from '../figure';

/** The cluster's figures (filled in below). */
export const clusterSection: BenchSection = {
  name: 'cluster',
  async run() {
    return [notMeasured({ id: 'cluster.push.1000', group: 'cluster', label: 'push-to-applied on a 3-server cluster', unit: 'ms' }, 'not yet')];
  },
};
