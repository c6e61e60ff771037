-- Declarations sent: one row per signed declaration the controller sent a node. The envelope
-- itself waits on the broker (the node's durable queue); this is the controller's account of
-- what it sent, to compare with what the node reports having applied.
CREATE TABLE declarations (
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  -- Increases with every declaration to the node, across controller epochs.
  generation bigint NOT NULL
    CONSTRAINT declarations_generation_positive CHECK (generation >= 1),
  -- The lease epoch it was sent under, inside the signed envelope (fencing).
  epoch bigint NOT NULL
    CONSTRAINT declarations_epoch_not_negative CHECK (epoch >= 0),
  -- overlay: the node's addresses and peers alone, sent first; full: everything it runs;
  -- final: naming nothing, sent on release.
  kind text NOT NULL
    CONSTRAINT declarations_kind_known CHECK (kind IN ('overlay', 'full', 'final')),
  -- SHA-256 of the canonical payload, as the node's reports quote it.
  digest text NOT NULL
    CONSTRAINT declarations_digest_format CHECK (digest ~ '^[0-9a-f]{64}$'),
  sent_at timestamptz NOT NULL,
  PRIMARY KEY (node, generation)
);
