"""A child run: its shell, agent loop, output selection and session logs."""
