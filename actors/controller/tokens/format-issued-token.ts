import { formatSpan } from '../nodes/format-span';
import type { IssuedToken } from './issue-enrolment-token';

/** The lines about a replaced key: recorded dead, and what can no longer be sealed to it. */
function cannotSealTo(dead: NonNullable<IssuedToken['cannot_seal_to']>): string[] {
  const waiting = dead.waiting.length === 0
    ? 'no declaration was waiting for it'
    : `declarations it never took: ${dead.waiting.map((d) => `generation ${d.generation} (${d.kind}, sent ${d.sent_at})`).join(', ')}; it is sent its current ones once enrolled`;
  const sealed = dead.sealed.length === 0
    ? 'no secret was sealed to it'
    : `the mesh can no longer seal to it: ${dead.sealed.join('; ')} (sealed to the new key once it enrols)`;
  return [`Its old key ${dead.dead_key} is recorded as dead, and nothing is sealed to it again: ${sealed}; ${waiting}.`];
}

/**
 * What `token issue` prints: the token alone on its first line (easy to select and copy), then
 * what it allows, until when, and the command to run on the machine. This is the only time
 * the token is shown.
 */
export function formatIssuedToken(issued: IssuedToken): string {
  const lifetime = formatSpan(Date.parse(issued.expires_at) - Date.parse(issued.issued_at));
  const forWhom = issued.for_node === null ? 'one machine the mesh has not seen join as a new node' : `one machine join as node ${issued.for_node}`;
  return [
    issued.token,
    '',
    `This token is shown once. It lets ${forWhom}, once, until ${issued.expires_at} (${lifetime}).`,
    'Carry it to that machine by hand and run there:  nox-mesh-host enrol --token <the token above>',
    ...(issued.for_node !== null && issued.revoked_identity !== null
      ? [`The previous identity of ${issued.for_node} is revoked: its broker user is removed and its connection closed.`]
      : []),
    ...(issued.cannot_seal_to === undefined ? [] : cannotSealTo(issued.cannot_seal_to)),
  ].join('\n');
}
