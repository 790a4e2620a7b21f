"""Output: the sentences built from results and one module per output format."""
