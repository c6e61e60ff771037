-- A gone node (stolen, dead) revoked by `mesh-control node revoke`: when, why (the operator's
-- words), and which broker user it held then. Kept after the machine enrols again, as its
-- history; lifecycle_state says whether it is revoked now.
ALTER TABLE nodes
  ADD COLUMN revoked_at timestamptz,
  -- What the operator gave with --why; null when nothing was.
  ADD COLUMN revoked_why text,
  -- The broker user (nkey, U…) removed by the revocation; null when the node held none.
  ADD COLUMN revoked_nkey text;
