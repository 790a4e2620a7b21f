"""Analysis: results as data (lifetimes, faults, dead windows, attribution, bounds, check
findings); no words and no formats."""
