"""omlx-logscan: turn oMLX server logs into incident timelines."""

__version__ = "0.1.0"
