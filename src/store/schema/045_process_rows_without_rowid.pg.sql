-- PostgreSQL keeps these tables as they are: it has no rowid (see 045_process_rows_without_rowid.sql).
SELECT 1;
