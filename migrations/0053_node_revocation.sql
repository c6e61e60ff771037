-- A gone node (stolen, dead) revoked by `mesh-control node revoke`: when, why (the operator's
-- words), and which broker user it held then. Kept after the machine enrols again, as its
-- history; lifecycle_state says whether it is revoked now.
ALTER TABLE nodes
  ADD COLUMN revoked_at timestamptz,
  -- What the operator gave with --why; null when nothing was.
  ADD COLUMN revoked_why text,
  -- The broker user (nkey, U…) removed by the revocation; null when the node held none.
  ADD COLUMN revoked_nkey text;

-- Keys a node held that are dead: replaced when a token was issued for the node (the machine
-- lost its key, or is enrolled again) or revoked with `mesh-control node revoke`. Nothing is
-- sealed to a dead key again, and enrolment refuses a machine that presents one.
CREATE TABLE dead_node_keys (
  -- The node's Ed25519 identity key (base64) and the broker user (U…) derived from it.
  public_key text PRIMARY KEY,
  nkey text NOT NULL UNIQUE,
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  died_at timestamptz NOT NULL,
  -- reissued: a token was issued for the node; revoked: the node was revoked.
  reason text NOT NULL
    CONSTRAINT dead_node_keys_reason_known CHECK (reason IN ('reissued', 'revoked'))
);
