"""Private parent completion (``completionTarget: "parent"``, PRV-1..8)."""
