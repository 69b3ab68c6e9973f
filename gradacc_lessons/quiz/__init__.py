"""The self-check: the question bank (`questions`), what counts (`attempts`), the quiz
itself (`selfcheck`), and its languages (`language`, `yoruba`)."""
