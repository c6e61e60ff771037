-- The broker certificates each node pins, as its latest heartbeat says (the current one, and
-- the next while the broker's certificate is rotated): what `mesh-control status` and the
-- certificate switch read to say which nodes would be cut off. Null until a heartbeat says it.
ALTER TABLE nodes
  ADD COLUMN broker_pins jsonb
    CONSTRAINT nodes_broker_pins_is_array CHECK (broker_pins IS NULL OR jsonb_typeof(broker_pins) = 'array'),
  ADD COLUMN broker_pins_at timestamptz;
