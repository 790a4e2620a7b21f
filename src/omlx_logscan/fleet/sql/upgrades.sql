-- The first fault after each macOS upgrade, per host: the first lifetime on the new version and
-- the first fault at or after it on that version (null when none came).
WITH firsts AS (
  SELECT host, os_version, MIN(start) AS since, MIN_BY(start_local, start) AS since_local
  FROM sessions
  WHERE os_version IS NOT NULL AND start IS NOT NULL
  GROUP BY host, os_version
),
upgrades AS (
  SELECT
    host,
    os_version,
    since,
    since_local,
    LAG(os_version) OVER (PARTITION BY host ORDER BY since) AS previous
  FROM firsts
)
SELECT
  u.host,
  u.previous AS from_version,
  u.os_version AS to_version,
  u.since_local AS first_start,
  MIN_BY(f.time_local, f.time) AS first_fault,
  MIN_BY(f.kind, f.time) AS first_fault_kind
FROM upgrades u
LEFT JOIN faults f ON f.host = u.host AND f.os_version = u.os_version AND f.time >= u.since
WHERE u.previous IS NOT NULL
GROUP BY u.host, u.previous, u.os_version, u.since, u.since_local
ORDER BY u.host, u.since
