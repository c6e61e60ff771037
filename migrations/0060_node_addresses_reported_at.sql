-- When the addresses kept in a node's inventory were reported by its host (the heartbeat's
-- sent_at, by the host's own clock), so a heartbeat taken late cannot put back the addresses a
-- newer one replaced. Null: the addresses are those of its enrolment.
ALTER TABLE nodes ADD COLUMN addresses_reported_at timestamptz;
