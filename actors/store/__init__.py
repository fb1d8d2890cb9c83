"""The registry's durable store: SQLite rows and what is cached beside them."""
