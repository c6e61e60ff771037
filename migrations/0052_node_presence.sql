-- Whether a node is heard from, as the controller judges it: the host's kind (its heartbeat
-- period and so its silence bound follow from it), since when a node shown `disconnected` has
-- been silent, and its last absence once it came back. A state, never an alarm: a laptop shut
-- for a week is doing nothing wrong. Written only by the acting controller (the marking loop
-- and the heartbeat receiver, both fenced by the epoch floor).
ALTER TABLE nodes
  -- resident or episodic, as its latest heartbeat says; null until one arrives (the profile
  -- given at enrolment says it meanwhile).
  ADD COLUMN host_kind text
    CONSTRAINT nodes_host_kind_known CHECK (host_kind IN ('resident', 'episodic')),
  -- While `disconnected`: when it was last heard from (or enrolled, if never heard), which is
  -- when its silence began. Cleared by the heartbeat that brings it back.
  ADD COLUMN disconnected_since timestamptz,
  -- Its last absence as the controller saw it: from the start of the silence to the heartbeat
  -- that brought it back (the controller's clock). Null until it has been away once.
  ADD COLUMN away_from timestamptz,
  ADD COLUMN away_until timestamptz,
  ADD CONSTRAINT nodes_away_said_whole CHECK ((away_from IS NULL) = (away_until IS NULL)),
  -- The host's own account of its last absence: the seconds it spent unlinked before its latest
  -- link, as the first heartbeat of that link says (its clock), and when that heartbeat came.
  -- Later heartbeats of a link say 0 and leave it.
  ADD COLUMN host_away_seconds double precision
    CONSTRAINT nodes_host_away_seconds_not_negative CHECK (host_away_seconds >= 0),
  ADD COLUMN host_away_reported_at timestamptz,
  ADD CONSTRAINT nodes_host_away_said_whole CHECK ((host_away_seconds IS NULL) = (host_away_reported_at IS NULL));
