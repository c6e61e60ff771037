-- Whether the one-time broker user a token allowed (`enrol-<token id>`) has been taken off the
-- broker. `mesh-control serve` sweeps tokens that have expired, used or not, removes their
-- users and sets this, so the sweep reads only the tokens still holding a user instead of every
-- token ever issued. A used token's user is usually removed at once by the enrolment responder;
-- the sweep is what makes sure no token's user outlives the token.
ALTER TABLE tokens ADD COLUMN broker_user_removed_at timestamptz;

-- Expired tokens whose user may still be on the broker, by expiry: what the sweep reads.
CREATE INDEX tokens_broker_user_held ON tokens (expires_at) WHERE broker_user_removed_at IS NULL;
