-- Durations: how long things took, recorded as the controller heard them end — apply (a
-- declaration's send to the node's first report on it), heartbeat-gap (between two heartbeats
-- of a node), plan-tier (a plan's first machine from its send to its report, and the rest from
-- their first send to the last) — for `mesh-control durations` to give count, median, p90 and
-- p99 per kind over a window, and for the core's bounds to be set from.
--
-- Not one row per measurement: ten thousand nodes beating every minute would add fourteen
-- million rows a day. Each row counts the measurements of one kind, in one five-minute window,
-- that fell in one logarithmic bin (bin b >= 1 holds [2^((b-1)/8), 2^(b/8)) ms; bin 0 under
-- 1 ms), so a quantile is known to within about 4.5 % and the table holds at most
-- kinds × windows × bins rows. Windows older than 30 days are pruned.
CREATE TABLE duration_counts (
  kind text NOT NULL
    CONSTRAINT duration_counts_kind_format CHECK (kind ~ '^[a-z][a-z-]{0,31}$'),
  -- The start of the five-minute window the measurements ended in (the controller's clock).
  window_start timestamptz NOT NULL,
  bin integer NOT NULL
    CONSTRAINT duration_counts_bin_range CHECK (bin BETWEEN 0 AND 400),
  count bigint NOT NULL
    CONSTRAINT duration_counts_count_positive CHECK (count > 0),
  PRIMARY KEY (kind, window_start, bin)
);

-- A window's summary and the prune read by time alone.
CREATE INDEX duration_counts_by_window ON duration_counts (window_start);
