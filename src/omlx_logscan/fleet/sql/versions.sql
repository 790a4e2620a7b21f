-- One row per macOS × oMLX version (× chip when given): hosts, process starts and hours, faults.
-- A lifetime's versions are those in force when it started; a fault counts where its lifetime does.
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
    FROM sessions
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
    FROM faults
  ) labelled
  GROUP BY os_version, omlx_version, chip
) f ON f.os_version = s.os_version AND f.omlx_version = s.omlx_version AND f.chip = s.chip
ORDER BY s.os_version, s.omlx_version, s.chip
