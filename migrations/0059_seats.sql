-- Seats: roles on the mesh held by one machine, or by several where the seat is replicated
-- (schema/seat.ts, `mesh-control seat NAME --add NODE`). A node holds a seat by hand (a row in
-- seat_holders) or through a module assigned to it whose revision holds the seat
-- (module_seat_claims); the holders of a seat are the union of both, so unassigning such a
-- module gives the seat up with it.

-- How a seat is held, once an operator said so (`seat NAME --replicated` / `--single`). A seat
-- without a row here is single, unless the controller knows it (KNOWN_SEATS) as replicated.
CREATE TABLE seats (
  name text PRIMARY KEY
    CONSTRAINT seats_name_is_label CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  replicated boolean NOT NULL,
  changed_at timestamptz NOT NULL
);

-- Holders added by hand (`seat NAME --add NODE`), removed by `seat NAME --remove NODE`.
CREATE TABLE seat_holders (
  seat text NOT NULL
    CONSTRAINT seat_holders_seat_is_label CHECK (seat ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  node text NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
  added_at timestamptz NOT NULL,
  PRIMARY KEY (seat, node)
);

CREATE INDEX seat_holders_by_node ON seat_holders (node);

-- The seats each module revision holds or needs, from its module.json ("seats"), recorded with
-- the revision so a node running an older revision is judged by what that revision says.
CREATE TABLE module_seat_claims (
  module text NOT NULL,
  version text NOT NULL,
  seat text NOT NULL
    CONSTRAINT module_seat_claims_seat_is_label CHECK (seat ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  claim text NOT NULL
    CONSTRAINT module_seat_claims_claim_known CHECK (claim IN ('holds', 'needs')),
  PRIMARY KEY (module, version, seat, claim),
  CONSTRAINT module_seat_claims_revision_known FOREIGN KEY (module, version) REFERENCES module_revisions (name, version) ON DELETE CASCADE
);

CREATE INDEX module_seat_claims_by_seat ON module_seat_claims (seat, claim);
