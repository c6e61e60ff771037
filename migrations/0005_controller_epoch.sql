-- The controller epoch floor: the highest lease epoch any controller has acted under. The lease
-- lives in the broker's KV bucket and its epoch is the revision it was taken at; a bucket made
-- again from nothing would start its revisions low, so a controller taking the lease raises its
-- epoch above this floor first. One row; it only ever rises.
CREATE TABLE controller_epoch (
  singleton boolean PRIMARY KEY DEFAULT true
    CONSTRAINT controller_epoch_one_row CHECK (singleton),
  epoch bigint NOT NULL
    CONSTRAINT controller_epoch_not_negative CHECK (epoch >= 0),
  -- Which controller raised it last, and when: for status and for an operator reading a failover.
  holder text NOT NULL,
  raised_at timestamptz NOT NULL
);
