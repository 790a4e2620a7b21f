"""Parsing: lines to records to typed events, by the line grammar and the message catalog."""
