"""Developer scripts of the course, run from the repository root as `python -m tools.<name>`:

- `notebooks`: run a notebook headless (the one execution helper of the course runner and tests);
- `site`: execute every lesson and build the course site with Sphinx (`make site`);
- `repository`: the course's repository address (pyproject.toml's `[tool.gradacc]`);
- `setup_cell`: the lessons' first cell, and the command that syncs it into every notebook.
"""
