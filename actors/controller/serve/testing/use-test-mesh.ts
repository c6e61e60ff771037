import { startTestPostgres, type TestPostgres } from '../../../shared/testing/test-postgres';
import { startTestMesh, type TestMesh } from './test-mesh';

/** The mesh and database of a test file, once `beforeAll` has run. */
export interface TestMeshSuite {
  readonly mesh: TestMesh;
  readonly postgres: TestPostgres;
}

/**
 * A mesh with its broker running (startTestMesh) on a PostgreSQL of its own (startTestPostgres),
 * for every test of the file or describe block it is called in: started in `beforeAll`, stopped
 * in `afterAll`. Read `mesh` and `postgres` inside tests and hooks, not when the file loads.
 */
export function useTestMesh(): TestMeshSuite {
  let postgres: TestPostgres | undefined;
  let mesh: TestMesh | undefined;
  beforeAll(async () => {
    postgres = await startTestPostgres();
    mesh = await startTestMesh({ database: postgres.url });
  }, 60_000);
  afterAll(async () => {
    await mesh?.stop();
    await postgres?.stop();
  });
  const started = <T>(what: string, value: T | undefined): T => {
    if (value === undefined) throw new Error(`the test ${what} is not started yet: read it inside a test or hook`);
    return value;
  };
  return {
    get mesh() {
      return started('mesh', mesh);
    },
    get postgres() {
      return started('PostgreSQL', postgres);
    },
  };
}
