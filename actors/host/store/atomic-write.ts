/**
 * writeFileAtomic lives in actors/shared/fs/atomic-write: the controller writes files atomically
 * too, and may not import host code. This path stays only for the broker configuration code
 * (actors/controller/broker) and the host's pidfile (actors/host/run), which are being rewritten
 * on their own branches; broker config moves to actors/shared with the accounts change, both then
 * import the shared module, and this file goes.
 */
export { writeFileAtomic } from '../../shared/fs/atomic-write';
