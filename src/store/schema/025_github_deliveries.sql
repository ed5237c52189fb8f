-- GitHub webhook deliveries seen (issue 26 part 3): X-GitHub-Delivery ids, so that a
-- delivery GitHub sends again (its "Redeliver", a retry after a timeout) starts nothing
-- twice.  Kept a day (store/github_deliveries.c removes older ones as new ones arrive).
CREATE TABLE github_deliveries (
    id           TEXT PRIMARY KEY,
    received_at  INTEGER NOT NULL
);
CREATE INDEX github_deliveries_received ON github_deliveries (received_at);
