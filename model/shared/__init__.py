"""What every protocol shares: the world's state, the configuration, the network, choices, faults,
the properties, the symmetry and generation renamings, and coverage."""
