-- One row per host: process starts and hours, faults, penalty-box entries, dead hours, last fault.
-- Plain SQL for DuckDB and Spark alike; reads the views sessions, faults and dead_windows.
SELECT
  s.host,
  s.process_starts,
  s.process_hours,
  COALESCE(f.faults, 0) AS faults,
  COALESCE(f.penalty_box_entries, 0) AS penalty_box_entries,
  COALESCE(d.dead_hours, 0.0) AS dead_hours,
  f.last_fault
FROM (
  SELECT
    host,
    SUM(CASE WHEN start_in_log THEN 1 ELSE 0 END) AS process_starts,
    SUM(COALESCE(hours, 0.0)) AS process_hours
  FROM sessions
  GROUP BY host
) s
LEFT JOIN (
  SELECT
    host,
    COUNT(*) AS faults,
    SUM(CASE WHEN outcome = 'penalty_box' THEN 1 ELSE 0 END) AS penalty_box_entries,
    MAX_BY(time_local, time) AS last_fault
  FROM faults
  GROUP BY host
) f ON f.host = s.host
LEFT JOIN (
  SELECT host, SUM(dead_at_least_s) / 3600.0 AS dead_hours
  FROM dead_windows
  GROUP BY host
) d ON d.host = s.host
ORDER BY s.host
