-- Fewer pages written per process (issue 27 item 2).  Every status change wrote its
-- PROCESS_STATUS event and a process_status_history row with the event's id: the same
-- change twice, and the history's b-tree (keyed by the process) took ~4.9 of a hello-world
-- process's ~29 WAL frames (its RUNNING and FINISHED rows land in pages the creates before
-- them filled).  The history is now read from the events themselves (event_type
-- 'PROCESS_STATUS', data {"status": …}), which every history row already had to join (the
-- history listed only rows whose event exists), so no row is lost.  A runner cannot write
-- an event of that type (the supervisor keeps only ELEMENT and ANSIBLE ones).

DROP TABLE process_status_history;
