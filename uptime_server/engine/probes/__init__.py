"""One probe per monitor type (registry: which module checks which type)."""
