"""The grader's half of each coding exercise: hints, references, comparisons (never sandboxed)."""
