"""The event stream: every source's events, deduplicated and merged in time order, batch or live."""
