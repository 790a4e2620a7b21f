"""Watching a live log: the loop, its alerts and the user's hook commands."""
