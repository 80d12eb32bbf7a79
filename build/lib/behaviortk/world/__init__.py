"""World geometry, agent state, physics integration and the spatial index."""
