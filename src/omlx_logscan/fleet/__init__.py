"""Many hosts pooled: the export's tables (or timeline documents) read by DuckDB with plain SQL.

The SQL files in ``sql/`` are the whole computation of counts and sums; they run unchanged on
Spark SQL. Only what neither engine has is done here in Python: the exact Poisson bounds.
"""
