-- Enrolment tokens: the one-time right to join, carried by hand from `mesh-control token issue`
-- to `nox-mesh-host enrol`. Only a hash of the secret is kept, so a copy of the store cannot
-- enrol anything. Single use (consumed_at is set once, by a conditional UPDATE) and expiring
-- whether used or not.
CREATE TABLE tokens (
  -- The token id printed inside the token: 8 random bytes, lowercase hex.
  id text PRIMARY KEY
    CONSTRAINT tokens_id_format CHECK (id ~ '^[0-9a-f]{16}$'),
  -- tokenSecretHash(secret) from actors/shared/crypto/token.ts: SHA-256, lowercase hex.
  secret_hash text NOT NULL
    CONSTRAINT tokens_secret_hash_format CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
  -- The node record the token enrols into (`--node NAME`); null for a machine the mesh has not
  -- seen (`--new`), which becomes a new record when it enrols.
  for_node text REFERENCES nodes (name) ON DELETE CASCADE,
  -- The broker user (nkey) that node held when this token was issued, revoked at issue: kept so
  -- the revocation can be shown and audited.
  revoked_identity text,
  CONSTRAINT tokens_revocation_needs_node CHECK (for_node IS NOT NULL OR revoked_identity IS NULL),
  issued_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz,
  CONSTRAINT tokens_expiry_after_issue CHECK (expires_at > issued_at),
  CONSTRAINT tokens_consumed_while_valid CHECK (consumed_at IS NULL OR (consumed_at >= issued_at AND consumed_at < expires_at))
);

CREATE INDEX tokens_for_node ON tokens (for_node) WHERE for_node IS NOT NULL;

-- Tokens still open, by expiry: what a sweep reads to remove the broker users of tokens that
-- expired unused.
CREATE INDEX tokens_open_by_expiry ON tokens (expires_at) WHERE consumed_at IS NULL;
