"""What each lesson demonstrates: one module per idea, each backed by the core package."""
