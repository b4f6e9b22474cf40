//! Model-checking helpers (the models themselves are in tests/).
