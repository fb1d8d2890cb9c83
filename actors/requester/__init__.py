"""A requester session: its shell, turns, waves and session facts."""
