-- Faults per host and kind (Timeout, SubmissionsIgnored, …).
SELECT host, kind, COUNT(*) AS faults
FROM faults
GROUP BY host, kind
ORDER BY host, kind
