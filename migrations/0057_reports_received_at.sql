-- The latest reports across the fleet, newest first (reports.recent, for the dashboard), read
-- from an index rather than by sorting every report kept.
CREATE INDEX reports_received_at ON reports (received_at DESC);
