"""Where models fail: confusion, per-label F1, turn position and intensity (`diagnostics`), and
scores by subgroup (`subgroups`)."""
