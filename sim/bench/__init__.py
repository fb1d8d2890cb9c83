"""``handoff bench``: the simulator measuring itself."""
