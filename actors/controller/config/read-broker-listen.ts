import { promises as fs } from 'node:fs';
import { MeshConfigInvalid } from './config-errors';
import { parseListenAddress, type ListenAddress } from './listen-address';

/**
 * Where the broker configuration written by `init` makes nats-server listen, read from its
 * `listen:` line: mesh.json does not repeat it, and the file is what nats-server obeys.
 */
export async function readBrokerListen(configFile: string): Promise<ListenAddress> {
  let text: string;
  try {
    text = await fs.readFile(configFile, 'utf8');
  } catch (error) {
    throw new MeshConfigInvalid(configFile, `the broker configuration cannot be read (${(error as Error).message})`, error);
  }
  const line = /^listen: "([^"]*)"$/m.exec(text);
  const address = line === null ? undefined : parseListenAddress(line[1] as string);
  if (address === undefined) throw new MeshConfigInvalid(configFile, 'the broker configuration has no listen: "HOST:PORT" line');
  return address;
}
