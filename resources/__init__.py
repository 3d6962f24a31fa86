"""Settings shipped with induce: EVALB presets, conventions, tag sets, sample data."""
