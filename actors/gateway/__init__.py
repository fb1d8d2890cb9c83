"""The gateway: its core, shell, transcript mirrors, routing, send errors."""
