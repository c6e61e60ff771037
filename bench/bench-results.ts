import type { BenchMode } from './bench-context';
import type { Figure } from './figure';

/** The machine a run was made on, so figures from two machines are never compared unawares. */
export interface MachineFacts {
  /** `os.cpus().length`. */
  cores: number;
  cpu_model: string;
  memory_gb: number;
  node: string;
  /** `nats-server --version`, or what was said when it could not be asked. */
  nats_server: string;
  os: string;
  /**
   * The file system of the directory the runs write in (`describeMount`): on an ext4 without a
   * journal, creating files slows down after many were removed in the last minutes (see
   * bench/remove-settled.ts). Absent in results written before it was recorded.
   */
  work_file_system?: string;
}

/**
 * What `npm run bench` writes: results/latest.json (full run) or results/quick.json (`--quick`).
 * snake_case, like every file format of the project; `format` changes when the layout does.
 */
export interface BenchResults {
  format: 1;
  mode: BenchMode;
  started_at: string;
  duration_s: number;
  machine: MachineFacts;
  figures: Figure[];
}
