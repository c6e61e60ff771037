-- A node's place on the overlay. The WireGuard public key is the one the machine generated and
-- sent at enrolment (the private half never leaves it). The address is assigned by the
-- controller from the configured pool, the first free host address, and kept for the node
-- across re-enrolments; it is given back to the pool only when the node is released.
ALTER TABLE nodes
  ADD COLUMN wireguard_public_key text
    CONSTRAINT nodes_wireguard_public_key_format CHECK (wireguard_public_key ~ '^[A-Za-z0-9+/]{43}=$'),
  -- Dotted IPv4 without a prefix ("10.77.0.5"); one node per address.
  ADD COLUMN overlay_address text
    CONSTRAINT nodes_overlay_address_unique UNIQUE
    CONSTRAINT nodes_overlay_address_format CHECK (overlay_address ~ '^[0-9]{1,3}(\.[0-9]{1,3}){3}$');
