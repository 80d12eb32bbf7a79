"""The definition format: models, loading, validation and JSON Schema."""
