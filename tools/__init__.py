"""Developer scripts of the course, run from the repository root as `python -m tools.<name>`:

- `notebooks`: run a notebook headless (the one execution helper of the course runner and tests);
- `course`: execute every lesson and render it to HTML (`make course`);
- `setup_cell`: the lessons' first cell, and the command that syncs it into every notebook.
"""
