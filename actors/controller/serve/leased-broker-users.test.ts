import type { BrokerUsers } from '../controller-context';
import { LeasedBrokerUsers } from './leased-broker-users';

/** A broker user list that records what it was asked, opened by a counted, scripted open. */
class RecordingUsers implements BrokerUsers {
  readonly asked: string[] = [];
  async addNode(node: string): Promise<void> {
    this.asked.push(`add node ${node}`);
  }
  async removeNode(node: string): Promise<void> {
    this.asked.push(`remove node ${node}`);
  }
  async addEnrolment(tokenId: string): Promise<void> {
    this.asked.push(`add token ${tokenId}`);
  }
  async removeEnrolment(tokenId: string): Promise<void> {
    this.asked.push(`remove token ${tokenId}`);
  }
}

describe('LeasedBrokerUsers', () => {
  test('opens the list once, when first asked, and passes every change to it', async () => {
    const list = new RecordingUsers();
    let opened = 0;
    const users = new LeasedBrokerUsers(async () => {
      opened += 1;
      return list;
    });
    expect(opened).toBe(0);
    await users.open();
    await users.addNode('kitchen', 'UABC');
    await users.removeEnrolment('t1');
    await Promise.all([users.removeNode('kitchen'), users.addEnrolment('t2', 'secret')]);
    expect(opened).toBe(1);
    expect(list.asked).toEqual(['add node kitchen', 'remove token t1', 'remove node kitchen', 'add token t2']);
  });

  test('tries to open again after an open that failed (a reload refused), and the change waits for it', async () => {
    const list = new RecordingUsers();
    const attempts: string[] = [];
    const users = new LeasedBrokerUsers(async () => {
      attempts.push('open');
      if (attempts.length === 1) throw new Error('the broker did not confirm the reload');
      return list;
    });
    await expect(users.open()).rejects.toThrow('did not confirm');
    await users.addNode('shelf', 'UDEF');
    expect(attempts).toEqual(['open', 'open']);
    expect(list.asked).toEqual(['add node shelf']);
  });
});
