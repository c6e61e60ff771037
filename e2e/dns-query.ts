/** What one DNS query over UDP came back with: the response code and the A records, or no answer. */
export type DnsAnswer = { rcode: number; addresses: string[] } | { timeout: true } | { error: string };

/** DNS response codes the tests name. */
export const NOERROR = 0;
/** The name does not exist. */
export const NXDOMAIN = 3;

/**
 * A DNS client small enough to run with `node -e` inside a machine's namespaces, where no dig is
 * installed: one A query over UDP to `argv[1]` (port `argv[3]`, 53 unless given) for `argv[2]`,
 * printing one JSON line, {rcode, addresses}, {timeout: true} after two seconds, or {error}.
 * It asks the server named and nothing else, so an answer is that server's, not the machine's
 * resolver's.
 */
export const DNS_QUERY = `
const dgram = require('dgram');
const [server, name, port] = process.argv.slice(1);
const id = Math.floor(Math.random() * 65536);
const labels = name.split('.').filter(Boolean).map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
const query = Buffer.concat([Buffer.from([id >> 8, id & 255, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), ...labels, Buffer.from([0, 0, 1, 0, 1])]);
const sock = dgram.createSocket('udp4');
const say = (answer) => { console.log(JSON.stringify(answer)); process.exit(0); };
setTimeout(() => say({ timeout: true }), 2000);
sock.on('error', (error) => say({ error: error.message }));
sock.on('message', (msg) => {
  if (msg.readUInt16BE(0) !== id) return;
  const rcode = msg[3] & 15;
  const count = msg.readUInt16BE(6);
  let at = 12;
  while (msg[at] !== 0) at += msg[at] + 1;
  at += 5;
  const addresses = [];
  for (let i = 0; i < count; i += 1) {
    if ((msg[at] & 0xc0) === 0xc0) at += 2; else { while (msg[at] !== 0) at += msg[at] + 1; at += 1; }
    const type = msg.readUInt16BE(at);
    const length = msg.readUInt16BE(at + 8);
    at += 10;
    if (type === 1 && length === 4) addresses.push([...msg.subarray(at, at + 4)].join('.'));
    at += length;
  }
  say({ rcode, addresses });
});
sock.send(query, Number(port || 53), server);
`;

/** Reads the line DNS_QUERY printed. */
export function dnsAnswerOf(stdout: string): DnsAnswer {
  try {
    return JSON.parse(stdout.trim()) as DnsAnswer;
  } catch {
    return { error: `no answer line: ${stdout}` };
  }
}
