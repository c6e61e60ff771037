import type { Resource } from '../../schema/resource';

/** Resources of the host figures: one directory and 1,000 files in it. */
export const HOST_FILES = 1000;

/** The directory, under a machine's root, that every tool in the comparison fills. */
export const BENCH_DIRECTORY = '/srv/mesh-bench';

/** One file of the comparison: where it goes under the root, and what it holds. */
export interface BenchFile {
  path: string;
  text: string;
}

/**
 * The same `count` small configuration files for every tool measured (the host, CFEngine,
 * Puppet, Ansible): one directory, files of 20-odd bytes, mode 0644. Small files on purpose:
 * the comparison is of what each tool does per resource, not of disk throughput.
 */
export function benchFiles(count: number): BenchFile[] {
  return Array.from({ length: count }, (_, index) => {
    const name = `file-${String(index).padStart(5, '0')}.conf`;
    return { path: `${BENCH_DIRECTORY}/${name}`, text: `setting_${index} = ${index}\n` };
  });
}

/** The files as the host's resources: the directory first, then each file. */
export function benchResources(count: number): Resource[] {
  return [
    { shape: 'directory', path: BENCH_DIRECTORY, mode: '0755', owner: 'root', group: 'root' },
    ...benchFiles(count).map((file): Resource => ({ shape: 'file', path: file.path, content: { text: file.text }, mode: '0644', owner: 'root', group: 'root' })),
  ];
}
