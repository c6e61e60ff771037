import path from 'node:path';
import * as fs from '../../shared/fs/promised-fs';
import { HostState } from '../../../schema/host-state';
import { parseContract } from '../../../schema/parse';
import { OperatorError } from '../../shared/operator-error';
import { HostStore } from '../store/host-store';
import { STATE_FILE } from '../store/store-files';

/** A dry run found the store needing a repair, which it may not make. */
export class StoreNeedsRecovery extends OperatorError {}

/**
 * The host's state as the store holds it, read for a dry run: without the lock (which is a
 * file) and without the recovery from the last-good copy that loading does (which writes). A
 * state.json that is whole is read as it is; a store that is missing altogether is what
 * HostStore.load says of it (a fresh host, written nowhere); anything else needs that recovery
 * first, and the dry run says so rather than make it.
 */
export async function readStoreUnchanged(stateDir: string): Promise<HostState> {
  const file = path.join(stateDir, STATE_FILE);
  let text: string | undefined;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw needsRecovery(file, (error as Error).message);
  }
  if (text === undefined) {
    const store = new HostStore(stateDir);
    const lastGood = await fs.stat(store.lastGoodFile).then(() => true, () => false);
    if (lastGood) throw needsRecovery(file, 'it is missing, and its last-good copy is there');
    return (await store.load()).state;
  }
  try {
    return parseContract(HostState, JSON.parse(text), 'host state');
  } catch (error) {
    throw needsRecovery(file, (error as Error).message);
  }
}

function needsRecovery(file: string, why: string): StoreNeedsRecovery {
  return new StoreNeedsRecovery(`the host store needs recovering from its last-good copy, which a dry run may not do (${why})`, {
    value: file,
    next: 'run `nox-mesh-host owned` (it recovers the store and says what it did), then the dry run again',
  });
}
