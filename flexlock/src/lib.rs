//! Group-commit locks (placeholder until the FlexLock lands).
