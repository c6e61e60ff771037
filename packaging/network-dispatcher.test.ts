import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGING, SignalRecorder, runScript } from './rouse-stand-in';

// The real dispatcher script and the real rouse helper, run against a real process that stands
// in for the host. Only the pidfile's place differs from an installed machine.

const DISPATCHER = path.join(PACKAGING, 'nox-mesh-host-network.sh');
const ROUSE = path.join(PACKAGING, 'nox-mesh-host-rouse');

interface DocumentedEvent {
  action: string;
  /** What NetworkManager-dispatcher(8) says the action means. */
  means: string;
  /** The first argument NetworkManager passes with it. */
  iface: string;
  env?: Record<string, string>;
  rouses: boolean;
}

// Every action NetworkManager-dispatcher(8) documents (NetworkManager 1.52), and connectivity-
// change once for each CONNECTIVITY_STATE it documents. The decisions and their reasons are the
// table at the top of nox-mesh-host-network.sh; a new action belongs in both.
const DOCUMENTED: DocumentedEvent[] = [
  { action: 'pre-up', means: 'the interface is connected but not yet fully activated', iface: 'wlan0', rouses: false },
  { action: 'up', means: 'the interface has been activated', iface: 'wlan0', rouses: true },
  { action: 'pre-down', means: 'the interface will be deactivated but is still connected', iface: 'wlan0', rouses: false },
  { action: 'down', means: 'the interface has been deactivated', iface: 'wlan0', rouses: false },
  { action: 'vpn-pre-up', means: 'the VPN is connected but not yet fully activated', iface: 'tun0', rouses: false },
  { action: 'vpn-up', means: 'a VPN connection has been activated', iface: 'tun0', rouses: true },
  { action: 'vpn-pre-down', means: 'the VPN will be deactivated but is still connected', iface: 'tun0', rouses: false },
  { action: 'vpn-down', means: 'a VPN connection has been deactivated', iface: 'tun0', rouses: true },
  { action: 'hostname', means: 'the system hostname has been updated', iface: 'none', rouses: false },
  { action: 'dhcp4-change', means: 'the DHCPv4 lease has changed', iface: 'wlan0', rouses: true },
  { action: 'dhcp6-change', means: 'the DHCPv6 lease has changed', iface: 'wlan0', rouses: true },
  { action: 'connectivity-change', means: 'the network became fully usable', iface: '', env: { CONNECTIVITY_STATE: 'FULL' }, rouses: true },
  { action: 'connectivity-change', means: 'the network is reachable but the Internet is not', iface: '', env: { CONNECTIVITY_STATE: 'LIMITED' }, rouses: false },
  { action: 'connectivity-change', means: 'a captive portal intercepts connections', iface: '', env: { CONNECTIVITY_STATE: 'PORTAL' }, rouses: false },
  { action: 'connectivity-change', means: 'there is no connectivity', iface: '', env: { CONNECTIVITY_STATE: 'NONE' }, rouses: false },
  { action: 'connectivity-change', means: 'connectivity is not known (the check is off or has not run)', iface: '', env: { CONNECTIVITY_STATE: 'UNKNOWN' }, rouses: false },
  { action: 'reapply', means: 'the connection was reapplied on the device', iface: 'wlan0', rouses: true },
  { action: 'dns-change', means: 'the DNS configuration has changed', iface: '', rouses: false },
  { action: 'device-add', means: 'a generic connection asks its handler to create a device', iface: 'gen0', rouses: false },
  { action: 'device-delete', means: 'a generic connection asks its handler to delete its device', iface: 'gen0', rouses: false },
];

describe('the NetworkManager dispatcher script', () => {
  let dir: string;
  let pidfile: string;
  let host: SignalRecorder;
  const others: SignalRecorder[] = [];

  const dispatch = (iface: string, action: string, env: Record<string, string> = {}) =>
    runScript(DISPATCHER, [iface, action], {
      MESH_HOST_PIDFILE: pidfile,
      MESH_HOST_ROUSE: ROUSE,
      NM_DISPATCHER_ACTION: action,
      ...env,
    });

  /** The rouses `work` caused the host, counted once they have all arrived. */
  const rousesDuring = async (recorder: SignalRecorder, work: () => Promise<unknown>): Promise<number> => {
    const before = recorder.rouses();
    await work();
    await recorder.settle();
    return recorder.rouses() - before;
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nm-dispatcher-'));
    host = await SignalRecorder.start(dir, path.join(dir, 'bin/nox-mesh-host'));
  });
  beforeEach(async () => {
    pidfile = path.join(dir, 'host.pid');
    await fs.writeFile(pidfile, `${host.pid}\n`);
  });
  afterAll(async () => {
    await host.stop();
    for (const other of others.splice(0)) await other.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('stands in for the host with the command line a host run by node has', () => {
    expect(host.cmdline()).toEqual([process.execPath, path.join(dir, 'bin/nox-mesh-host'), expect.any(String)]);
  });

  const named = DOCUMENTED.map((event) => {
    const state = event.env?.CONNECTIVITY_STATE;
    const on = state === undefined ? event.action : `${event.action} to ${state}`;
    return [`${event.rouses ? 'rouses the host once' : 'leaves the host alone'} on ${on}: ${event.means}`, event] as const;
  });
  test.each(named)('%s', async (_name, event) => {
    let run: Awaited<ReturnType<typeof dispatch>> | undefined;
    const rouses = await rousesDuring(host, async () => { run = await dispatch(event.iface, event.action, event.env); });
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
    expect(rouses).toBe(event.rouses ? 1 : 0);
  });

  test('leaves the host alone on connectivity-change without a CONNECTIVITY_STATE', async () => {
    expect(await rousesDuring(host, () => dispatch('', 'connectivity-change'))).toBe(0);
  });

  test('leaves the host alone on an action NetworkManager does not document, and on no action at all', async () => {
    const runs: unknown[] = [];
    const rouses = await rousesDuring(host, async () => {
      runs.push(await dispatch('wlan0', 'link-flap'));
      runs.push(await runScript(DISPATCHER, [], { MESH_HOST_PIDFILE: pidfile, MESH_HOST_ROUSE: ROUSE }));
    });
    expect(rouses).toBe(0);
    expect(runs).toEqual([
      { status: 0, signal: null, stdout: '', stderr: '' },
      { status: 0, signal: null, stdout: '', stderr: '' },
    ]);
  });

  test('signals a single-file host, whose own name is nox-mesh-host', async () => {
    const sea = await SignalRecorder.start(dir, path.join(dir, 'sea/host-main.js'), path.join(dir, 'sea/nox-mesh-host'));
    others.push(sea);
    expect(sea.cmdline()[0]).toBe(path.join(dir, 'sea/nox-mesh-host'));
    await fs.writeFile(pidfile, `${sea.pid}\n`);
    expect(await rousesDuring(sea, () => dispatch('eth0', 'up'))).toBe(1);
  });

  test('exits 0 quietly and signals nothing when there is no pidfile (the host is not running)', async () => {
    await fs.rm(pidfile);
    let run;
    const rouses = await rousesDuring(host, async () => { run = await dispatch('wlan0', 'up'); });
    expect(rouses).toBe(0);
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
  });

  test('does not signal a process that is not the host, left in a stale pidfile', async () => {
    const stranger = await SignalRecorder.start(dir, path.join(dir, 'bin/sleeper.js'));
    others.push(stranger);
    await fs.writeFile(pidfile, `${stranger.pid}\n`);
    expect(await rousesDuring(stranger, () => dispatch('wlan0', 'up'))).toBe(0);
  });

  test('does not take the launcher, whose name starts with the host\'s, for the host', async () => {
    const launcher = await SignalRecorder.start(dir, path.join(dir, 'bin/nox-mesh-host-launch'));
    others.push(launcher);
    await fs.writeFile(pidfile, `${launcher.pid}\n`);
    expect(await rousesDuring(launcher, () => dispatch('wlan0', 'up'))).toBe(0);
  });

  test('signals nothing when the pidfile names a process that has ended', async () => {
    const gone = await SignalRecorder.start(dir, path.join(dir, 'bin/nox-mesh-host'));
    await gone.stop();
    await fs.writeFile(pidfile, `${gone.pid}\n`);
    const run = await dispatch('wlan0', 'up');
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
  });

  test('refuses a pidfile holding 0, which kill would read as its own process group', async () => {
    await fs.writeFile(pidfile, '0\n');
    let run;
    const rouses = await rousesDuring(host, async () => { run = await dispatch('wlan0', 'up'); });
    // A helper that sent SIGUSR1 to its group would have ended itself and the dispatcher with it.
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
    expect(rouses).toBe(0);
  });

  test('signals nothing when the pidfile holds something other than a pid', async () => {
    for (const content of ['', 'nox-mesh-host\n', `-${host.pid}\n`, `${host.pid} ${host.pid}\n`]) {
      await fs.writeFile(pidfile, content);
      let run;
      const rouses = await rousesDuring(host, async () => { run = await dispatch('wlan0', 'up'); });
      expect({ content, rouses, run }).toEqual({ content, rouses: 0, run: { status: 0, signal: null, stdout: '', stderr: '' } });
    }
  });

  test('reads a pidfile written without a trailing newline', async () => {
    await fs.writeFile(pidfile, String(host.pid));
    expect(await rousesDuring(host, () => dispatch('wlan0', 'up'))).toBe(1);
  });

  test('exits 0 quietly when the rouse helper is not installed', async () => {
    const run = await runScript(DISPATCHER, ['wlan0', 'up'], { MESH_HOST_PIDFILE: pidfile, MESH_HOST_ROUSE: path.join(dir, 'missing') });
    expect(run).toEqual({ status: 0, signal: null, stdout: '', stderr: '' });
  });

  test('ships its scripts as NetworkManager and elogind require: executable, and writable by the owner alone', async () => {
    for (const script of [DISPATCHER, ROUSE, path.join(PACKAGING, 'nox-mesh-host-resume.elogind')]) {
      const mode = (await fs.stat(script)).mode & 0o7777;
      expect({ script: path.basename(script), mode: mode.toString(8) }).toEqual({ script: path.basename(script), mode: '755' });
    }
  });
});
