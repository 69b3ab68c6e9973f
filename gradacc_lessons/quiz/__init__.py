"""The self-check question bank (`questions`) and the self-check widgets (`selfcheck`)."""
