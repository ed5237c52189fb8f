-- The audit log's chain (issue 30; docs/security.md "The audit chain"): each entry carries
-- its number in the chain (1, 2, 3…, no gaps) and a MAC over the previous entry's MAC and
-- its own fields, keyed with a key derived from the master key; the one row of
-- audit_chain holds the newest entry's number and MAC and the anchor (the last entry that
-- retention removed), tagged (keyed BLAKE2b) with a key derived from the master key.  Entries
-- written before this migration are chained at the first start after it.
ALTER TABLE audit_log ADD COLUMN chain_no INTEGER;
ALTER TABLE audit_log ADD COLUMN mac BLOB;
CREATE UNIQUE INDEX audit_log_chain ON audit_log (chain_no);
CREATE TABLE audit_chain (
    id          INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    head_no     INTEGER NOT NULL,
    head_mac    BLOB NOT NULL,
    anchor_no   INTEGER NOT NULL,
    anchor_mac  BLOB NOT NULL,
    key_id      BLOB NOT NULL,     -- the id of the master key that chained (its envelopes' key id)
    tag         BLOB NOT NULL
);
