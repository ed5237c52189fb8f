-- The processes that are not final, by status: GET /metrics counts them per scrape from
-- this small index (a count over every stored process would grow with the history).
CREATE INDEX processes_live_status ON processes (status)
    WHERE status NOT IN ('FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT');
