"""Scripts that run inside the sandbox, as plain files (`python -I jail.py ...`): they import
nothing of this package, so that the sandbox needs only Python, torch and these files."""
