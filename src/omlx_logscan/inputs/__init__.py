"""Inputs: where log bytes come from (files, folders, compressed streams, stdin, a growing file)
and the side files a user gives (overlays, OS histories)."""
