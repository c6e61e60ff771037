-- A node that cannot hear its declarations: its host found its consumer (or the declaration
-- stream) gone from the broker, and says so in its heartbeats until it hears again. Set and
-- cleared by each heartbeat, for status; the controller's read-back makes the consumer again.
ALTER TABLE nodes
  -- Since when the host has found nothing to read from (its clock); null while it hears.
  ADD COLUMN deaf_since timestamptz,
  -- What it found: its consumer or the whole stream missing.
  ADD COLUMN deaf_reason text
    CONSTRAINT nodes_deaf_reason_known CHECK (deaf_reason IN ('consumer_not_found', 'stream_not_found')),
  ADD CONSTRAINT nodes_deaf_said_whole CHECK ((deaf_since IS NULL) = (deaf_reason IS NULL));
