-- One row per macOS × oMLX version (× chip when given): hosts, process starts and hours, faults.
-- A lifetime's versions are those in force when it started; a fault counts where its lifetime does.
-- A lifetime whose log states no oMLX version (a Homebrew path in a traceback, the banner) between
-- two lifetimes of its host that state the same one ran that version: no upgrade and back between
-- them. Nothing else is filled in: before the first statement or after the last, it is unknown.
WITH ordered AS (
  SELECT
    host,
    session,
    start,
    start_in_log,
    hours,
    os_version,
    omlx_version,
    chip,
    MAX(CASE WHEN omlx_version IS NOT NULL THEN start END) OVER (
      PARTITION BY host ORDER BY start ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS stated_before,
    MIN(CASE WHEN omlx_version IS NOT NULL THEN start END) OVER (
      PARTITION BY host ORDER BY start ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING
    ) AS stated_after
  FROM sessions
),
stated AS (
  SELECT host, start, MIN(omlx_version) AS low, MAX(omlx_version) AS high
  FROM sessions
  WHERE omlx_version IS NOT NULL AND start IS NOT NULL
  GROUP BY host, start
),
versioned AS (
  SELECT
    o.host,
    o.session,
    o.start,
    o.start_in_log,
    o.hours,
    o.os_version,
    o.chip,
    COALESCE(
      o.omlx_version,
      CASE WHEN o.start IS NOT NULL AND b.low = b.high AND a.low = a.high AND b.low = a.low THEN b.low END
    ) AS omlx_version
  FROM ordered o
  LEFT JOIN stated b ON b.host = o.host AND b.start = o.stated_before
  LEFT JOIN stated a ON a.host = o.host AND a.start = o.stated_after
),
numbered AS (
  SELECT host, session, time, outcome, os_version, omlx_version, chip,
    ROW_NUMBER() OVER (ORDER BY host, time, session, kind) AS id
  FROM faults
),
fault_versions AS (
  -- A fault's version: its own row's, else that of its lifetime (the latest of that number begun by then).
  SELECT
    MIN(n.outcome) AS outcome,
    MIN(n.os_version) AS os_version,
    MIN(n.chip) AS chip,
    COALESCE(MIN(n.omlx_version), MAX_BY(v.omlx_version, v.start)) AS omlx_version
  FROM numbered n
  LEFT JOIN versioned v ON v.host = n.host AND v.session = n.session AND v.start <= n.time
  GROUP BY n.id
)
SELECT
  s.os_version,
  s.omlx_version,
  s.chip,
  s.hosts,
  s.process_starts,
  s.process_hours,
  COALESCE(f.faults, 0) AS faults,
  COALESCE(f.penalty_box_entries, 0) AS penalty_box_entries
FROM (
  SELECT
    os_version,
    omlx_version,
    chip,
    COUNT(DISTINCT host) AS hosts,
    SUM(CASE WHEN start_in_log THEN 1 ELSE 0 END) AS process_starts,
    SUM(COALESCE(hours, 0.0)) AS process_hours
  FROM (
    SELECT
      host,
      start_in_log,
      hours,
      COALESCE(os_version, 'unknown') AS os_version,
      COALESCE(omlx_version, 'unknown') AS omlx_version,
      COALESCE(chip, '') AS chip
    FROM versioned
  ) labelled
  GROUP BY os_version, omlx_version, chip
) s
LEFT JOIN (
  SELECT
    os_version,
    omlx_version,
    chip,
    COUNT(*) AS faults,
    SUM(CASE WHEN outcome = 'penalty_box' THEN 1 ELSE 0 END) AS penalty_box_entries
  FROM (
    SELECT
      outcome,
      COALESCE(os_version, 'unknown') AS os_version,
      COALESCE(omlx_version, 'unknown') AS omlx_version,
      COALESCE(chip, '') AS chip
    FROM fault_versions
  ) labelled
  GROUP BY os_version, omlx_version, chip
) f ON f.os_version = s.os_version AND f.omlx_version = s.omlx_version AND f.chip = s.chip
ORDER BY s.os_version, s.omlx_version, s.chip
